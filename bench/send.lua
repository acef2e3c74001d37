-- wrk script for the HTTP v1 send API with validate_only (nothing is stored).
-- Usage: HERALD_TOKEN=... HERALD_PROJECT=... wrk -t1 -c64 -d10s -s bench/send.lua http://127.0.0.1:8080
local project = os.getenv("HERALD_PROJECT") or "bench-project"
wrk.method = "POST"
wrk.path = "/v1/projects/" .. project .. "/messages:send"
wrk.headers["Authorization"] = "Bearer " .. (os.getenv("HERALD_TOKEN") or "")
wrk.headers["Content-Type"] = "application/json"
wrk.body = '{"message":{"topic":"bench","notification":{"title":"Benchmark","body":"Hello from wrk"},'
  .. '"data":{"sequence":"1","kind":"bench"},"android":{"priority":"high","ttl":"3600s"}},"validate_only":true}'

function done(summary, latency, requests)
  io.write(string.format("wrk: %d requests in %.2f s = %.0f/s, non-2xx %d, p50 %d us, p99 %d us\n",
    summary.requests, summary.duration / 1e6, summary.requests / (summary.duration / 1e6),
    summary.errors.status, latency:percentile(50), latency:percentile(99)))
end
