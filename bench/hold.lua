-- One streamed chat completion of 20 tokens per request: with the hold profile, at least 0.8 s open.
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '{"model":"sim-assistant","stream":true,"max_tokens":20,"min_tokens":20,' ..
           '"ignore_eos":true,"messages":[{"role":"user","content":"What is phishing?"}]}'
