"""Runs a copy of tinygrad's test_ops.py under pytest (scripts/tinygrad-test-ops.sh sets up the
folder and the import path) and summarizes: passed / failed / errors / skipped out of the total,
then the failures grouped by cause (the exception's first line with numbers made generic, the
missing attribute's name kept), largest group first. A test that kills the interpreter is
counted as an error ("crashed the interpreter") and the run goes on with the tests after it.
  python3 tinygrad_test_ops.py WORKDIR [pytest args...]"""
import collections
import json
import os
import re
import subprocess
import sys


def cause(message: str) -> str:
  text = (message or "").strip()
  line = text.splitlines()[0] if text else "(no message)"
  m = re.search(r"(module|object) '([\w.]+)'(?: object)? has no attribute '([^']+)'", text)
  if m and m.group(2).startswith("torch"): return f"the reference PyTorch lacks {m.group(2)}.{m.group(3)}"
  m = re.search(r"'([\w.]+)' object has no attribute '([^']+)'|type object '([\w.]+)' has no attribute '([^']+)'", text)
  if m:
    owner, name = (m.group(1), m.group(2)) if m.group(1) else (m.group(3), m.group(4))
    return f"missing: {owner.split('.')[-1]}.{name}"
  if re.match(r"TypeError: \w+\(\) received an invalid combination of arguments", line):
    return "the reference PyTorch rejects the call (" + line.split("(")[0].split()[-1] + "())"
  if re.match(r'RuntimeError: "\w+" not implemented for', line):
    return "the reference PyTorch lacks the dtype: " + line.split(": ", 1)[1]
  m = re.search(r"(dtype) mismatch: tinygrad=(\S+) \| torch=(\S+)", text)
  if m: return f"dtype mismatch: tinygrad {m.group(2)} vs torch {m.group(3)}"
  if "shape mismatch" in text: return "shape mismatch"
  if "Not equal to tolerance" in text or "Mismatched elements" in text: return "values differ (assert_allclose)"
  if "Arrays are not equal" in text: return "values differ (assert_equal)"
  line = re.sub(r"^Exception: (forward pass|backward pass tensor \d+) failed shape \([^)]*\): ", "", line)
  line = re.sub(r"\d+", "N", line)
  return line[:160]


def main(work: str, extra: list) -> None:
  results = os.path.join(work, "results.jsonl")
  os.environ["TG_TEST_OPS_RESULTS"] = results
  base = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir", work]
  collected = subprocess.run(base + ["--collect-only", "test_ops.py"] + extra, cwd=work,
                             capture_output=True, text=True)
  ids = [l.strip() for l in collected.stdout.splitlines() if "::" in l]
  if not ids:
    print(collected.stdout[-3000:], collected.stderr[-3000:])
    sys.exit("tinygrad-test-ops: no tests collected")
  done = {}
  with open(os.path.join(work, "pytest.log"), "w") as log:
    while True:
      todo = [i for i in ids if i not in done]
      if not todo: break
      # Test ids as arguments (no -k/-m: the ids already are the selection).
      subprocess.run(base + todo, cwd=work, stdout=log, stderr=subprocess.STDOUT)
      started = None
      if os.path.exists(results):
        for line in open(results):
          e = json.loads(line)
          if e.get("start"): started = e["id"]
          else:
            done[e["id"]] = e
            if started == e["id"]: started = None
      if started is None or started in done: break
      done[started] = {"id": started, "outcome": "error", "message": "crashed the interpreter (see pytest.log)"}
      with open(results, "a") as f: f.write(json.dumps(done[started]) + "\n")
  counts = collections.Counter(e["outcome"] for e in done.values())
  groups = collections.defaultdict(list)
  for e in done.values():
    if e["outcome"] in ("failed", "error"): groups[cause(e["message"])].append(e["id"].split("::")[-1])
  print(f"\ntinygrad test_ops: {counts['passed']} passed, {counts['failed']} failed, {counts['error']} errors, "
        f"{counts['skipped']} skipped of {len(ids)}")
  print(f"\nfailures and errors by cause ({len(groups)} causes):")
  for key, names in sorted(groups.items(), key=lambda kv: -len(kv[1])):
    shown = ", ".join(names[:8]) + (", ..." if len(names) > 8 else "")
    print(f"  {len(names):4d}  {key}\n          {shown}")


if __name__ == "__main__":
  main(sys.argv[1], sys.argv[2:])
