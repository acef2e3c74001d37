-- wrk script for GET /healthz: the HTTP server's own cost of a request (no body, no
-- credentials, no message), the floor under bench/send.lua's figure.
-- Usage: wrk -t1 -c64 -d10s -s bench/healthz.lua http://127.0.0.1:8080
wrk.method = "GET"
wrk.path = "/healthz"

function done(summary, latency, requests)
  io.write(string.format("wrk: %d requests in %.2f s = %.0f/s, non-2xx %d, p50 %d us, p99 %d us\n",
    summary.requests, summary.duration / 1e6, summary.requests / (summary.duration / 1e6),
    summary.errors.status, latency:percentile(50), latency:percentile(99)))
end
