#!/usr/bin/python3
"""The comparison client of bench/load_bench.sh: a straightforward Python asyncio/aiohttp client.

    /usr/bin/python3 bench/aiohttp_client.py --url http://127.0.0.1:8000/v1 --concurrency 64 \
        --duration 10 --out records.jsonl

It measures what `stagegate profile` measures for a stream, the way one would write it by hand:
CONCURRENCY tasks each send one streamed chat completion after another (a closed loop) for
DURATION seconds; every `data:` line is parsed as JSON; the arrival time of each token chunk
(time.monotonic_ns, CLOCK_MONOTONIC) is kept, and so TTFT. Records are written as JSON lines at
the end (as stagegate writes requests.jsonl), and a summary as one JSON object on stdout, with
the CPU time of the load alone (`cpu_s`: imports and writing the records left out).

With --timestamps it sends `X-Sim-Timestamps: on` and keeps the `sim_sent_ns` of each request's
first token chunk, so its lateness can be set against the sim's ground truth. Debian's
python3-aiohttp is the one used (/usr/bin/python3).
"""
import argparse
import asyncio
import json
import sys
import time

import aiohttp


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--url", required=True, help="base URL, e.g. http://127.0.0.1:8000/v1")
    parser.add_argument("--model", default="sim-assistant")
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--duration", type=float, default=10)
    parser.add_argument("--output-tokens", type=int, default=128)
    parser.add_argument("--input-words", type=int, default=550,
                        help="prompt length, as stagegate's default synthetic prompt")
    parser.add_argument("--timestamps", action="store_true", help="ask the sim for sim_sent_ns")
    parser.add_argument("--out", required=True, help="where to write one JSON record a request")
    return parser.parse_args()


async def one_request(session, url, body, headers, records):
    record = {"sent_ns": time.monotonic_ns(), "first_token_ns": None, "chunk_times_ns": [],
              "first_sim_sent_ns": None, "ok": False, "error": ""}
    try:
        async with session.post(url, json=body, headers=headers) as response:
            if response.status != 200:
                record["error"] = "HTTP %d" % response.status
                await response.read()
                return
            async for line in response.content:
                now = time.monotonic_ns()
                if not line.startswith(b"data:"):
                    continue
                data = line[5:].strip()
                if data == b"[DONE]":
                    record["ok"] = True
                    break
                chunk = json.loads(data)
                choices = chunk.get("choices") or []
                if choices and (choices[0].get("delta") or {}).get("content"):
                    if record["first_token_ns"] is None:
                        record["first_token_ns"] = now
                        record["first_sim_sent_ns"] = chunk.get("sim_sent_ns")
                    record["chunk_times_ns"].append(now)
    except (aiohttp.ClientError, asyncio.TimeoutError, ValueError) as error:
        record["error"] = repr(error)
    finally:
        record["end_ns"] = time.monotonic_ns()
        records.append(record)


async def run(args):
    url = args.url.rstrip("/") + "/chat/completions"
    words = "how do I reset my password on the service desk portal".split()
    prompt = " ".join(words[i % len(words)] for i in range(args.input_words))
    body = {"model": args.model, "stream": True, "max_tokens": args.output_tokens,
            "min_tokens": args.output_tokens, "ignore_eos": True,
            "stream_options": {"include_usage": True},
            "messages": [{"role": "user", "content": prompt}]}
    headers = {"X-Sim-Timestamps": "on"} if args.timestamps else {}
    records = []
    connector = aiohttp.TCPConnector(limit=args.concurrency)
    timeout = aiohttp.ClientTimeout(total=60)
    started = time.monotonic()
    cpu_started = time.process_time()
    deadline = started + args.duration

    async def loop(session):
        while time.monotonic() < deadline:
            await one_request(session, url, body, headers, records)

    async with aiohttp.ClientSession(connector=connector, timeout=timeout) as session:
        await asyncio.gather(*(loop(session) for _ in range(args.concurrency)))
    return records, time.monotonic() - started, time.process_time() - cpu_started


def main():
    args = parse_args()
    records, wall_s, cpu_s = asyncio.run(run(args))
    with open(args.out, "w") as out:
        for record in records:
            out.write(json.dumps(record) + "\n")
    ok = sum(1 for r in records if r["ok"])
    chunks = sum(len(r["chunk_times_ns"]) for r in records)
    json.dump({"requests": len(records), "ok": ok, "errors": len(records) - ok,
               "chunks": chunks, "wall_s": wall_s, "cpu_s": cpu_s}, sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
