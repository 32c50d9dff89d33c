#!/usr/bin/python3
"""Writes a static OpenAI-style chat completion stream, the body nginx serves in bench/load_bench.sh.

    bench/load/sse_body.py TOKENS > stream.txt

vLLM's shape: a role chunk, TOKENS content chunks of one token each, a finish chunk, a usage
chunk (empty choices) and `data: [DONE]`. Deterministic, so every run serves the same bytes.
"""
import json
import sys

WORDS = ("the account is locked after five failed attempts so reset it from the portal "
         "then wait ten minutes before you sign in again with the new password").split()


def event(choices, usage=None):
    chunk = {"id": "chatcmpl-static-1", "object": "chat.completion.chunk", "created": 1764374400,
             "model": "static-model", "choices": choices}
    if usage is not None:
        chunk["usage"] = usage
    return "data: " + json.dumps(chunk, separators=(",", ":")) + "\n\n"


def main():
    tokens = int(sys.argv[1]) if len(sys.argv) > 1 else 128
    out = [event([{"index": 0, "delta": {"role": "assistant", "content": ""}, "logprobs": None,
                   "finish_reason": None}])]
    for i in range(tokens):
        word = WORDS[i % len(WORDS)]
        out.append(event([{"index": 0, "delta": {"content": (" " if i else "") + word},
                           "logprobs": None, "finish_reason": None}]))
    out.append(event([{"index": 0, "delta": {}, "logprobs": None, "finish_reason": "length"}]))
    out.append(event([], {"prompt_tokens": 128, "completion_tokens": tokens,
                          "total_tokens": 128 + tokens}))
    out.append("data: [DONE]\n\n")
    sys.stdout.write("".join(out))


if __name__ == "__main__":
    main()
