"""Summarizes a pytest JUnit XML file of tinygrad's test_ops: the counts, then the failures
and errors grouped by cause (the exception's first line with numbers and quoted values made
generic, except the missing attribute's name), largest group first."""
import collections
import re
import sys
import xml.etree.ElementTree as ET


def cause(message: str) -> str:
  line = (message or "").strip().splitlines()[0] if (message or "").strip() else "(no message)"
  m = re.search(r"has no attribute '([^']+)'", line)
  if m: return f"missing attribute: {m.group(1)}"
  if "Not equal to tolerance" in message or "Mismatched elements" in message: return "values differ (assert_allclose)"
  if "Arrays are not equal" in message: return "values differ (assert_equal)"
  m = re.search(r"(shape|dtype) mismatch: tinygrad=(\S+) \| torch=(\S+)", line)
  if m: return f"{m.group(1)} mismatch: tinygrad {m.group(2)} vs torch {m.group(3)}" if m.group(1) == "dtype" else "shape mismatch"
  line = re.sub(r"^(forward pass|backward pass tensor \d+) failed shape \([^)]*\): ", "", line)
  line = re.sub(r"\d+", "N", line)
  return line[:140]


def main(path: str) -> None:
  root = ET.parse(path).getroot()
  cases = list(root.iter("testcase"))
  groups = collections.defaultdict(list)
  counts = collections.Counter()
  for c in cases:
    name = c.get("name")
    bad = c.find("failure") if c.find("failure") is not None else c.find("error")
    if c.find("skipped") is not None:
      counts["skipped"] += 1
    elif bad is not None:
      counts["failed" if bad.tag == "failure" else "errors"] += 1
      groups[cause(bad.get("message") or bad.text or "")].append(name)
    else:
      counts["passed"] += 1
  total = len(cases)
  print(f"\ntinygrad test_ops: {counts['passed']} passed, {counts['failed']} failed, "
        f"{counts['errors']} errors, {counts['skipped']} skipped of {total}")
  print(f"\nfailures by cause ({len(groups)} causes):")
  for key, names in sorted(groups.items(), key=lambda kv: -len(kv[1])):
    shown = ", ".join(names[:6]) + (", ..." if len(names) > 6 else "")
    print(f"  {len(names):4d}  {key}\n        {shown}")


if __name__ == "__main__":
  main(sys.argv[1])
