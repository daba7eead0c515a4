// Conformance driver for Node clients: undici's EnvHttpProxyAgent, or
// proxy-from-env (the proxy it returns is used the way axios uses it: a plain
// HTTP request, or CONNECT, to that proxy). Every case group in one process.
// Usage: node node_driver.js undici|pfe MODULE_DIR GROUPS_FILE
// Prints "gid<TAB>index<TAB>ok|err <message>" per URL.
'use strict'
const fs = require('fs')
const http = require('http')
const net = require('net')

const [mode, moduleDir, groupsFile] = process.argv.slice(2)
const TIMEOUT = 3000

function readGroups (path) {
  const groups = []
  for (const line of fs.readFileSync(path, 'utf8').split('\n')) {
    if (!line) continue
    const [kind, ...rest] = line.split('\t')
    if (kind === 'G') groups.push({ gid: rest[0], env: [], urls: [] })
    else if (kind === 'E') groups[groups.length - 1].env.push([rest[0], rest.slice(1).join('\t')])
    else if (kind === 'U') groups[groups.length - 1].urls.push([rest[0], rest[1]])
  }
  return groups
}

function viaProxy (proxy, url) {
  // one request to the proxy the library chose: CONNECT for https, absolute-form for http
  return new Promise((resolve, reject) => {
    const p = new URL(proxy)
    const u = new URL(url)
    const socket = net.connect({ host: p.hostname, port: Number(p.port) || 80 })
    socket.setTimeout(TIMEOUT, () => socket.destroy(new Error('timeout')))
    socket.on('connect', () => {
      const head = u.protocol === 'https:'
        ? `CONNECT ${u.hostname.includes(':') && !u.hostname.startsWith('[') ? '[' + u.hostname + ']' : u.hostname}:${u.port || 443} HTTP/1.1\r\nHost: ${u.host}\r\n\r\n`
        : `HEAD ${url} HTTP/1.1\r\nHost: ${u.host}\r\n\r\n`
      socket.write(head)
    })
    socket.on('data', () => { socket.destroy(); resolve('ok proxied') })
    socket.on('error', reject)
  })
}

function direct (url) {
  return new Promise((resolve, reject) => {
    if (url.startsWith('https:')) { // the target speaks plain HTTP: a TCP connect is the proof
      const u = new URL(url)
      const host = u.hostname.replace(/^\[|\]$/g, '')
      const socket = net.connect({ host, port: Number(u.port) || 443 })
      socket.setTimeout(TIMEOUT, () => socket.destroy(new Error('timeout')))
      socket.on('connect', () => { socket.destroy(); resolve('ok direct') })
      socket.on('error', reject)
      return
    }
    const req = http.request(url, { method: 'HEAD', timeout: TIMEOUT }, (res) => {
      res.resume(); resolve(`ok ${res.statusCode}`)
    })
    req.on('timeout', () => req.destroy(new Error('timeout')))
    req.on('error', reject)
    req.end()
  })
}

async function main () {
  let previous = []
  let undici, pfe
  if (mode === 'undici') undici = require(moduleDir)
  else pfe = require(moduleDir)
  for (const g of readGroups(groupsFile)) {
    for (const [k] of previous) delete process.env[k]
    for (const [k, v] of g.env) process.env[k] = v
    previous = g.env
    let agent = null
    let failure = null
    if (undici) {
      try { agent = new undici.EnvHttpProxyAgent() } catch (e) { failure = e }
    }
    for (const [index, url] of g.urls) {
      let status
      try {
        if (failure) throw failure
        if (undici) {
          const res = await undici.request(url, { method: 'HEAD', dispatcher: agent, headersTimeout: TIMEOUT, bodyTimeout: TIMEOUT, connect: { rejectUnauthorized: false } })
          status = `ok ${res.statusCode}`
        } else {
          const proxy = pfe.getProxyForUrl(url)
          status = proxy ? await viaProxy(proxy, url) : await direct(url)
        }
      } catch (e) {
        status = `err ${e.code || e.name}: ${e.message}`
      }
      process.stdout.write(`${g.gid}\t${index}\t${status.split(/\s+/).join(' ')}\n`)
    }
    if (agent) await agent.close().catch(() => {})
  }
}
main()
