// Conformance driver for Java: HttpURLConnection through the default
// ProxySelector, which reads http(s).proxyHost/-Port and http.nonProxyHosts on
// every request; every case group in one JVM (properties replaced per group).
// Usage: java JavaDriver.java GROUPS_FILE; prints "gid<TAB>index<TAB>ok|err <message>".
import java.net.HttpURLConnection;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

public class JavaDriver {
    public static void main(String[] args) throws Exception {
        List<String> previous = new ArrayList<>();
        String gid = null;
        StringBuilder out = new StringBuilder();
        for (String line : Files.readAllLines(Path.of(args[0]))) {
            String[] parts = line.split("\t", -1);
            switch (parts[0]) {
                case "G" -> {
                    for (String key : previous) System.clearProperty(key);
                    previous.clear();
                    gid = parts[1];
                }
                case "E" -> {
                    System.setProperty(parts[1], parts[2]);
                    previous.add(parts[1]);
                }
                case "U" -> {
                    String status;
                    try {
                        HttpURLConnection c = (HttpURLConnection) new URL(parts[2]).openConnection();
                        c.setConnectTimeout(3000);
                        c.setReadTimeout(3000);
                        c.setRequestMethod("HEAD");
                        c.setUseCaches(false);
                        status = "ok " + c.getResponseCode();
                        c.disconnect();
                    } catch (Exception e) {
                        status = "err " + e.getClass().getName() + ": " + e.getMessage();
                    }
                    System.out.println(gid + "\t" + parts[1] + "\t" + String.join(" ", status.split("\\s+")));
                }
                default -> { }
            }
        }
    }
}
