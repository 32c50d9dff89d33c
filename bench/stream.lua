-- One streamed chat completion of exactly 128 tokens per request.
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '{"model":"sim-assistant","stream":true,"max_tokens":128,"min_tokens":128,' ..
           '"ignore_eos":true,"messages":[{"role":"user","content":"What is phishing?"}]}'
