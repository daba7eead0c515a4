# Conformance driver for Ruby Net::HTTP: every case group in one process; the
# proxy variables are read per connection (p_addr = :ENV).
# Usage: ruby rb_driver.rb GROUPS_FILE; prints "gid<TAB>index<TAB>ok|err <message>".
require 'net/http'
require 'openssl'
require 'uri'

groups = []
File.foreach(ARGV[0]) do |line|
  kind, *rest = line.chomp.split("\t", -1)
  case kind
  when 'G' then groups << { gid: rest[0], env: [], urls: [] }
  when 'E' then groups[-1][:env] << [rest[0], rest[1..].join("\t")]
  when 'U' then groups[-1][:urls] << [rest[0], rest[1]]
  end
end

$stderr.reopen(File::NULL) # Net::HTTP warns about HTTP_PROXY on stderr
previous = []
groups.each do |g|
  previous.each { |k, _| ENV.delete(k) }
  g[:env].each { |k, v| ENV[k] = v }
  previous = g[:env]
  g[:urls].each do |index, url|
    status = begin
      uri = URI(url)
      http = Net::HTTP.new(uri.hostname, uri.port)
      http.use_ssl = uri.scheme == 'https'
      http.verify_mode = OpenSSL::SSL::VERIFY_NONE
      http.open_timeout = 3
      http.read_timeout = 3
      "ok #{http.request_head('/').code}"
    rescue Exception => e # every failure is a result to report
      "err #{e.class}: #{e.message}".split.join(' ')
    end
    puts "#{g[:gid]}\t#{index}\t#{status}"
  end
end
