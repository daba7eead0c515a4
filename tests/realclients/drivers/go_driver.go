// Conformance driver for Go: every case group in one process. net/http reads
// the proxy variables once per process (ProxyFromEnvironment caches them), so
// the driver builds the same function net/http builds - httpproxy.FromEnvironment
// of the Go installation's own vendored golang.org/x/net - for each group.
// Usage: go_driver GROUPS_FILE; prints "gid<TAB>index<TAB>ok|err <message>".
package main

import (
	"bufio"
	"crypto/tls"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"golang.org/x/net/http/httpproxy"
)

type group struct {
	gid  string
	env  [][2]string
	urls [][2]string
}

func read(path string) []group {
	f, err := os.Open(path)
	if err != nil {
		panic(err)
	}
	defer f.Close()
	var out []group
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		parts := strings.SplitN(sc.Text(), "\t", 3)
		switch parts[0] {
		case "G":
			out = append(out, group{gid: parts[1]})
		case "E":
			g := &out[len(out)-1]
			g.env = append(g.env, [2]string{parts[1], parts[2]})
		case "U":
			g := &out[len(out)-1]
			g.urls = append(g.urls, [2]string{parts[1], parts[2]})
		}
	}
	return out
}

func main() {
	var previous [][2]string
	for _, g := range read(os.Args[1]) {
		for _, kv := range previous {
			os.Unsetenv(kv[0])
		}
		for _, kv := range g.env {
			os.Setenv(kv[0], kv[1])
		}
		previous = g.env
		proxyFor := httpproxy.FromEnvironment().ProxyFunc()
		transport := &http.Transport{
			Proxy:             func(r *http.Request) (*url.URL, error) { return proxyFor(r.URL) },
			DisableKeepAlives: true,
			TLSClientConfig:   &tls.Config{InsecureSkipVerify: true},
		}
		client := &http.Client{Transport: transport, Timeout: 3 * time.Second}
		for _, u := range g.urls {
			status := "ok"
			resp, err := client.Head(u[1])
			if err != nil {
				status = "err " + strings.Join(strings.Fields(err.Error()), " ")
			} else {
				resp.Body.Close()
			}
			fmt.Printf("%s\t%s\t%s\n", g.gid, u[0], status)
		}
	}
}
