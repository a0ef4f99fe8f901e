// Starts Portkey's gateway for `npm run bench -- proxy`: `node start.mjs --port=N --headless`.
// The gateway listens on every interface by default (no host option); the benchmark keeps it on
// the loopback, so the one listen call it makes is given 127.0.0.1 as its host.
import http from "node:http";

const listen = http.Server.prototype.listen;
http.Server.prototype.listen = function listenOnLoopback(port, host, ...rest) {
  if (typeof host === "function") return listen.call(this, port, "127.0.0.1", host, ...rest);
  return listen.call(this, port, typeof host === "string" ? host : "127.0.0.1", ...rest);
};

await import("@portkey-ai/gateway/build/start-server.js");
