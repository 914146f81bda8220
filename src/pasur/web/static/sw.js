// The service worker: keeps the page's files so that it opens, and plays against the AI in the
// browser (offline/), with no network. Every file is fetched from the network first (so a new
// version arrives at once) and kept; the kept copy answers when the network cannot. The API and
// the tables' socket are never kept: offline, the page answers its AI game itself (offline.js).
"use strict";

const CACHE = "pasur-page-v1";
// the page and everything it loads (a test checks that every file index.html names is here)
const FILES = [
  "/",
  "/manifest.webmanifest",
  "/static/style.css",
  "/static/favicon.svg",
  "/static/fonts/Vazirmatn-Variable.woff2",
  "/static/strings.js",
  "/static/tables.js",
  "/static/app.js",
  "/static/teach.js",
  "/static/teach.css",
  "/static/offline/rules.js",
  "/static/offline/agents.js",
  "/static/offline/offline.js",
  "/static/offline/policy-weights.json",
];

self.addEventListener("install", (event) => {
  event.waitUntil(caches.open(CACHE).then((cache) => cache.addAll(FILES)).then(() => self.skipWaiting()));
});

self.addEventListener("activate", (event) => {
  event.waitUntil(
    caches
      .keys()
      .then((keys) => Promise.all(keys.filter((k) => k !== CACHE).map((k) => caches.delete(k))))
      .then(() => self.clients.claim()),
  );
});

self.addEventListener("fetch", (event) => {
  const req = event.request;
  const url = new URL(req.url);
  if (req.method !== "GET" || url.origin !== self.location.origin || url.pathname.startsWith("/api/") || url.pathname.startsWith("/ws")) return;
  const key = url.pathname === "/" || req.mode === "navigate" ? "/" : url.pathname;
  event.respondWith(
    fetch(req)
      .then((res) => {
        if (res.ok && FILES.includes(key)) {
          const copy = res.clone();
          caches.open(CACHE).then((cache) => cache.put(key, copy));
        }
        return res;
      })
      .catch(() => caches.match(key).then((hit) => hit || Response.error())),
  );
});
