#!/usr/bin/python3
"""Turns the raw output of bench/load_bench.sh into figures (one JSON file each) and a summary.

    analyze.py overhead-stagegate OUT_DIR TIME_FILE      > result.json
    analyze.py overhead-aiohttp SUMMARY_JSON TIME_FILE   > result.json
    analyze.py accuracy OUT_DIR TRUTH_JSON               > result.json
    analyze.py accuracy-aiohttp RECORDS_JSONL            > result.json
    analyze.py schedule OUT_DIR                          > result.json
    analyze.py memory OUT_DIR TIME_FILE PEAK_RUNNING OPEN_RSS_KIB > result.json
    analyze.py report RESULTS_DIR [--markdown]

TIME_FILE holds GNU time's "%U,%S,%M": the whole process's user and system CPU seconds and its
peak resident set in KiB. Python 3 standard library only.
"""
import json
import os
import statistics
import sys


def percentile(values, p):
    """The nearest-rank percentile (the smallest value with at least p% of values at or below)."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, -(-len(ordered) * p // 100))
    return ordered[int(rank) - 1]


def read_jsonl(path):
    with open(path) as lines:
        return [json.loads(line) for line in lines if line.strip()]


def read_time(path):
    # The last line: a failing command makes GNU time write a line about its status first.
    user, system, max_rss_kib = open(path).read().split()[-1].split(",")
    return float(user) + float(system), int(max_rss_kib)


def origin_of(profile):
    """The run's time zero on the client's steady clock (CLOCK_MONOTONIC ns), or None."""
    if "origin_steady_ns" in profile:
        return profile["origin_steady_ns"]
    return (profile.get("run") or {}).get("origin_steady_ns")


def overhead_stagegate(out_dir, time_file):
    profile = json.load(open(os.path.join(out_dir, "profile.json")))
    records = read_jsonl(os.path.join(out_dir, "requests.jsonl"))
    level = profile["levels"][0]["self_check"]
    cpu_whole, rss = read_time(time_file)
    chunks = sum(len(r["chunk_times_ns"]) for r in records)
    return {"requests": len(records), "errors": sum(r["outcome"] != "ok" for r in records),
            "chunks": chunks, "cpu_whole_s": cpu_whole, "cpu_phase_s": level["client_cpu_s"],
            "wall_s": level["wall_s"], "max_worker_busy": level["max_worker_busy"],
            "max_rss_kib": rss}


def overhead_aiohttp(summary_file, time_file):
    summary = json.load(open(summary_file))
    cpu_whole, rss = read_time(time_file)
    return {"requests": summary["requests"], "errors": summary["errors"],
            "chunks": summary["chunks"], "cpu_whole_s": cpu_whole, "cpu_phase_s": summary["cpu_s"],
            "wall_s": summary["wall_s"],
            "max_rss_kib": rss}


def lateness_summary(first_token_us, chunk_us, **extra):
    out = {"requests": len(first_token_us),
           "first_token_p50_us": percentile(first_token_us, 50),
           "first_token_p99_us": percentile(first_token_us, 99),
           "first_token_max_us": max(first_token_us) if first_token_us else None,
           "first_token_min_us": min(first_token_us) if first_token_us else None}
    if chunk_us is not None:
        out.update({"chunks": len(chunk_us), "chunk_p50_us": percentile(chunk_us, 50),
                    "chunk_p99_us": percentile(chunk_us, 99)})
    out.update(extra)
    return out


def accuracy(out_dir, truth_file):
    """The client's lateness: its time for a token chunk minus the sim's send time of that chunk,
    both on CLOCK_MONOTONIC. Measured TTFT minus true TTFT is this for the first token."""
    profile = json.load(open(os.path.join(out_dir, "profile.json")))
    origin = origin_of(profile)
    if origin is None:
        return {"unavailable": "profile.json has no origin_steady_ns (the client's time zero)"}
    try:
        truth_doc = json.load(open(truth_file))
    except (OSError, ValueError):
        return {"unavailable": "the sim served no ground truth at GET /sim/ground-truth"}
    truth = {t["trace_id"]: t["chunk_sent_ns"] for t in truth_doc["requests"]}
    records = read_jsonl(os.path.join(out_dir, "requests.jsonl"))
    first, chunks = [], []
    # Requests sent after the first round, once every stream is open: the steady state, without
    # the burst of opening all the connections at once.
    streams = int(profile["levels"][0]["value"])
    steady = []
    measured, measured_chunks = [], []  # requests outside the warmup: those the statistics cover
    worst = None  # (lateness, sequence, send time in s from the origin) of the latest first token
    unmatched = mismatched = 0
    for r in records:
        sent = truth.get(r["trace_id"])
        times = r["chunk_times_ns"]
        if r["outcome"] != "ok" or not times:
            continue
        if sent is None:
            unmatched += 1
            continue
        if len(sent) != len(times):
            mismatched += 1
            continue
        first.append((origin + r["times_ns"]["first_token"] - sent[0]) / 1e3)
        if r["sequence"] >= streams:
            steady.append(first[-1])
        late = [(origin + t - s) / 1e3 for t, s in zip(times, sent)]
        if not r["warmup"]:
            measured.append(first[-1])
            measured_chunks.extend(late)
            if worst is None or first[-1] > worst[0]:
                worst = (first[-1], r["sequence"], r["times_ns"]["sent"] / 1e9)
        chunks.extend(late)
    level = profile["levels"][0]
    return lateness_summary(
        first, chunks, unmatched=unmatched, chunk_count_mismatch=mismatched,
        errors=sum(r["outcome"] != "ok" for r in records),
        negative=sum(1 for v in chunks if v < 0),
        worst_sequence=worst and worst[1], worst_sent_s=worst and worst[2],
        steady_requests=len(steady), steady_first_token_p99_us=percentile(steady, 99),
        measured_requests=len(measured), measured_first_token_p50_us=percentile(measured, 50),
        measured_first_token_p99_us=percentile(measured, 99),
        measured_first_token_max_us=max(measured) if measured else None,
        measured_chunk_p99_us=percentile(measured_chunks, 99),
        ttft_p50_ms=level["metrics"]["ttft_ms"]["p50"],
        max_worker_busy=level["self_check"]["max_worker_busy"],
        read_delay_p99_us=level["self_check"]["receive_times"]["read_delay_p99_us"],
        read_delay_max_us=level["self_check"]["receive_times"]["read_delay_max_us"],
        kernel_stamped_reads=level["self_check"]["receive_times"]["kernel_stamped_reads"],
        client_stamped_reads=level["self_check"]["receive_times"]["client_stamped_reads"],
        min_chunk_us=min(chunks) if chunks else None,
        client_cpu_s=level["self_check"]["client_cpu_s"],
        closed_loop_lag_p99_ms=level["self_check"]["schedule_lag_p99_ms"])


def accuracy_aiohttp(records_file):
    records = read_jsonl(records_file)
    first = [(r["first_token_ns"] - r["first_sim_sent_ns"]) / 1e3 for r in records
             if r["ok"] and r["first_token_ns"] and r["first_sim_sent_ns"]]
    return lateness_summary(first, None, errors=sum(not r["ok"] for r in records))


def schedule(out_dir):
    profile = json.load(open(os.path.join(out_dir, "profile.json")))
    levels = []
    for level in profile["levels"]:
        check = level["self_check"]
        levels.append({"rate": level["value"], "offered": check["offered_rate"],
                       "achieved": check["achieved_rate"],
                       "lag_p50_ms": level["metrics"]["schedule_lag_ms"]["p50"],
                       "lag_p99_ms": check["schedule_lag_p99_ms"],
                       "lag_max_ms": check["schedule_lag_max_ms"],
                       "max_worker_busy": check["max_worker_busy"],
                       "sent": level["requests"]["sent"],
                       "completed": level["requests"]["completed"]})
    return {"levels": levels}


def memory(out_dir, time_file, peak_running, open_rss_kib):
    records = read_jsonl(os.path.join(out_dir, "requests.jsonl"))
    events = []
    for r in records:
        t = r["times_ns"]
        if t["sent"] is not None and t["end"] is not None:
            events += [(t["sent"], 1), (t["end"], -1)]
    in_flight = peak = 0
    for _, step in sorted(events):  # an end sorts before a send at the same ns
        in_flight += step
        peak = max(peak, in_flight)
    cpu_whole, rss = read_time(time_file)
    errors = {}
    for r in records:
        if r["outcome"] != "ok":
            key = r["outcome"] + ": " + r["error"][:60]
            errors[key] = errors.get(key, 0) + 1
    check = json.load(open(os.path.join(out_dir, "profile.json")))["levels"][0]["self_check"]
    return {"requests": len(records), "errors": errors, "peak_in_flight": peak,
            "sim_peak_running": int(float(peak_running or 0)), "max_rss_kib": rss,
            "open_rss_kib": int(open_rss_kib or 0),
            "cpu_whole_s": cpu_whole, "max_worker_busy": check["max_worker_busy"]}


# --- the summary ---------------------------------------------------------------------------------

def load_runs(results, prefix):
    names = sorted(n for n in os.listdir(results) if n.startswith(prefix) and n.endswith(".json"))
    return [json.load(open(os.path.join(results, n))) for n in names]


def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def fmt(value, digits=0):
    if value is None:
        return "-"
    return f"{value:,.{digits}f}"


def verdict(ok):
    return "-" if ok is None else ("met" if ok else "MISSED")


def report(results, markdown):
    rows = []  # (figure, value, target, verdict)

    sg = load_runs(results, "overhead-stagegate-")
    py = load_runs(results, "overhead-aiohttp-")
    if sg and py:
        sg_whole = median([r["chunks"] / r["cpu_whole_s"] for r in sg])
        sg_phase = median([r["chunks"] / r["cpu_phase_s"] for r in sg])
        py_whole = median([r["chunks"] / r["cpu_whole_s"] for r in py])
        py_phase = median([r["chunks"] / r["cpu_phase_s"] for r in py])
        rows += [
            ("stagegate: chunks per client CPU-second (whole process)", fmt(sg_whole),
             ">= 250,000", verdict(sg_whole >= 250_000)),
            ("stagegate: chunks per CPU-second of the load phase alone", fmt(sg_phase), "", ""),
            ("aiohttp client: chunks per CPU-second (whole process)", fmt(py_whole), "", ""),
            ("aiohttp client: chunks per CPU-second of the load alone", fmt(py_phase), "", ""),
            ("stagegate / aiohttp (whole process)", fmt(sg_whole / py_whole, 1) + "x", ">= 10x",
             verdict(sg_whole / py_whole >= 10)),
            ("stagegate / aiohttp (load alone)", fmt(sg_phase / py_phase, 1) + "x", "", ""),
            ("stagegate: responses/s, chunks/s (wall, 1 core)",
             fmt(median([r["requests"] / r["wall_s"] for r in sg])) + ", " +
             fmt(median([r["chunks"] / r["wall_s"] for r in sg])), "", ""),
            ("aiohttp client: responses/s, chunks/s (wall, 1 core)",
             fmt(median([r["requests"] / r["wall_s"] for r in py])) + ", " +
             fmt(median([r["chunks"] / r["wall_s"] for r in py])), "", ""),
            ("errors (stagegate, aiohttp)", f"{sum(r['errors'] for r in sg)}, "
             f"{sum(r['errors'] for r in py)}", "0", verdict(
                 sum(r['errors'] for r in sg) + sum(r['errors'] for r in py) == 0))]

    accuracy_sets = (
        ("accuracy-default-1000-", "1,000", True, "by default (kernel receive times)"),
        ("accuracy-read-1000-", "1,000", False, "--receive-times read (stamped when read)"),
        ("accuracy-default-100-", "100", False, "by default (kernel receive times)"),
        ("accuracy-read-100-", "100", False, "--receive-times read (stamped when read)"))
    for name, label, target, mode in accuracy_sets:
        runs = load_runs(results, name)
        if not runs:
            continue
        if any("unavailable" in a for a in runs):
            why = next(a["unavailable"] for a in runs if "unavailable" in a)
            rows.append((f"|TTFT error| p99 at {label} streams", "unavailable",
                         "<= 200 us" if target else "", "MISSED (" + why + ")" if target else ""))
            continue
        p99 = median([a["measured_first_token_p99_us"] for a in runs])
        rows.append((f"stagegate |TTFT error| p50 / p99 / max at {label} streams (us), {mode}",
                     f"{fmt(median([a['measured_first_token_p50_us'] for a in runs]))} / "
                     f"{fmt(p99)} / {fmt(median([a['measured_first_token_max_us'] for a in runs]))}",
                     "p99 <= 200 us" if target else "", verdict(p99 <= 200) if target else ""))
        if any(a["measured_requests"] != a["requests"] for a in runs):
            rows.append((f"  the same, the warmup included: p99 (us)",
                         fmt(median([a["first_token_p99_us"] for a in runs])), "", ""))
        else:
            rows.append((f"  the same, after the first round (every stream open): p99 (us)",
                         fmt(median([a["steady_first_token_p99_us"] for a in runs])), "", ""))
        rows.append((f"  every-chunk error p50 / p99 (us)",
                     f"{fmt(median([a['chunk_p50_us'] for a in runs]))} / "
                     f"{fmt(median([a['measured_chunk_p99_us'] for a in runs]))}", "", ""))
        for run, a in enumerate(runs, 1):
            rows.append((f"  (run {run}: |TTFT error| p99 {fmt(a['measured_first_token_p99_us'])} us, "
                         f"max {fmt(a['measured_first_token_max_us'])} us (request "
                         f"{a['worst_sequence']}, sent at {fmt(a['worst_sent_s'], 2)} s); "
                         f"{a['measured_requests']} of {a['requests']} requests measured, "
                         f"{a['errors']} errors, {a['unmatched']} unmatched, "
                         f"{a['negative']} chunks negative (smallest {fmt(a['min_chunk_us'], 1)} us); "
                         f"self-check read delay p99 {fmt(a['read_delay_p99_us'])} us, max "
                         f"{fmt(a['read_delay_max_us'])} us; {a['client_stamped_reads']} of "
                         f"{a['kernel_stamped_reads'] + a['client_stamped_reads']} reads without "
                         f"a kernel stamp; worker busy {fmt(100 * a['max_worker_busy'])}%)",
                         "", "", ""))
    for name, label in (("accuracy-aiohttp-1000", "1,000"), ("accuracy-aiohttp-100", "100")):
        runs = load_runs(results, name + ".")
        if runs:
            a = runs[0]
            rows.append((f"aiohttp |TTFT error| p50 / p99 at {label} streams (us)",
                         f"{fmt(a['first_token_p50_us'])} / {fmt(a['first_token_p99_us'])}",
                         "", ""))

    for prefix, isolated in (("schedule-rt-", True), ("schedule-plain-", False)):
        runs = load_runs(results, prefix)
        if not runs:
            continue
        rates = [l["rate"] for l in runs[0]["levels"]]
        for i, rate in enumerate(rates):
            levels = [r["levels"][i] for r in runs]
            lag = median([l["lag_p99_ms"] for l in levels])
            target = rate == 2000 and isolated
            how = "" if isolated else ", no real-time priority"
            rows.append((f"Poisson {fmt(rate)}/s x 2,000 requests{how}: offered / achieved req/s",
                         f"{fmt(median([l['offered'] for l in levels]))} / "
                         f"{fmt(median([l['achieved'] for l in levels]))}", "", ""))
            rows.append((f"  schedule lag p50 / p99 / max (ms){how}",
                         f"{fmt(median([l['lag_p50_ms'] for l in levels]), 3)} / {fmt(lag, 3)} / "
                         f"{fmt(median([l['lag_max_ms'] for l in levels]), 3)}",
                         "p99 <= 1 ms" if target else "",
                         verdict(lag <= 1) if target else ""))

    runs = load_runs(results, "memory.")
    if runs:
        m = runs[0]
        errors = sum(m["errors"].values())
        rows += [
            ("10,000 streams: client peak resident memory (MiB)", fmt(m["max_rss_kib"] / 1024),
             "< 1,024", verdict(m["max_rss_kib"] < 1024 * 1024 and m["peak_in_flight"] >= 10_000)),
            ("  resident memory while >= 95% of the streams were open (MiB)",
             fmt(m["open_rss_kib"] / 1024), "", ""),
            ("  streams in flight at once: client records / sim running",
             f"{fmt(m['peak_in_flight'])} / {fmt(m['sim_peak_running'])}", "10,000", ""),
            ("  requests, errors", f"{fmt(m['requests'])}, {errors}", "", "")]

    if markdown:
        print("| figure | value | target | |")
        print("| --- | ---: | --- | --- |")
        for row in rows:
            print("| " + " | ".join(row) + " |")
        return
    width = max(len(r[0]) for r in rows if r[1])
    for figure, value, target, mark in rows:
        if not value:  # a note under the row above
            print(f"  {figure}")
            continue
        print(f"  {figure:<{width}}  {value:>22}  {target:<14} {mark}".rstrip())


def main():
    command, args = sys.argv[1], sys.argv[2:]
    if command == "report":
        return report(args[0], "--markdown" in args[1:])
    handlers = {"overhead-stagegate": overhead_stagegate, "overhead-aiohttp": overhead_aiohttp,
                "accuracy": accuracy, "accuracy-aiohttp": accuracy_aiohttp,
                "schedule": schedule, "memory": memory}
    json.dump(handlers[command](*args), sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
