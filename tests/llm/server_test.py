"""The OpenAI-compatible server as a user's program sees it, through the official `openai`
client: a completion, a streamed chat completion, four concurrent requests, malformed and
oversized requests (4xx with an OpenAI error body), a client that disconnects mid-stream, and
the server still answering afterwards. Run by run_server_test.sh against `tinyrun llm serve`."""
import http.client
import json
import socket
import sys
import threading

import openai

host, port = sys.argv[1], int(sys.argv[2])
base = f"http://{host}:{port}/v1"
client = openai.OpenAI(base_url=base, api_key="none", timeout=120, max_retries=0)
failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


models = client.models.list()
check(len(models.data) == 1 and models.data[0].id.endswith(".gguf"), "GET /v1/models lists the model")

first = client.completions.create(model=models.data[0].id, prompt="Once upon a time", max_tokens=24, temperature=0)
text = first.choices[0].text
check(len(text) > 10, f"a completion: {text!r}")
check(first.usage.prompt_tokens > 0 and first.usage.completion_tokens == 24, "usage counts prompt and completion tokens")
check(first.choices[0].finish_reason == "length", "finish_reason length")

pieces = []
stream = client.chat.completions.create(model="m", messages=[{"role": "user", "content": "Hi"}], max_tokens=16,
                                        temperature=0, stream=True)
finish = None
for chunk in stream:
    d = chunk.choices[0].delta
    if d.content:
        pieces.append(d.content)
    finish = chunk.choices[0].finish_reason or finish
check(len(pieces) > 1 and finish in ("stop", "length"), f"a streamed chat completion in {len(pieces)} pieces: {''.join(pieces)!r}")

results = [None] * 4
errors = []


def worker(i):
    try:
        r = client.completions.create(model="m", prompt="Once upon a time", max_tokens=24, temperature=0)
        results[i] = r.choices[0].text
    except Exception as e:  # noqa: BLE001 - any failure is the finding
        errors.append(repr(e))


threads = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
for t in threads:
    t.start()
for t in threads:
    t.join(timeout=300)
check(not errors and all(r == text for r in results), f"four concurrent requests all answered, greedy = the first: {errors}")


def raw(method, path, body, headers=None):
    c = http.client.HTTPConnection(host, port, timeout=60)
    c.request(method, path, body=body, headers=headers or {"Content-Type": "application/json"})
    r = c.getresponse()
    data = r.read()
    c.close()
    return r.status, data


status, data = raw("POST", "/v1/chat/completions", b'{"messages": [{"role": "user", "content": "Hi"}')
err = json.loads(data).get("error", {})
check(status == 400 and err.get("type") == "invalid_request_error" and "JSON" in err.get("message", ""),
      f"malformed JSON: {status} {err.get('message')!r}")
status, data = raw("POST", "/v1/completions", json.dumps({"prompt": "x", "max_tokens": "many"}).encode())
check(status == 400 and json.loads(data)["error"]["param"] == "max_tokens", f"a field of the wrong type: {status}")
try:
    client.chat.completions.create(model="m", messages=[], max_tokens=4)
    check(False, "the client raises on an empty message list")
except openai.BadRequestError as e:
    check(e.status_code == 400, f"the client sees OpenAI's error: {e.message!r}")
# An oversized body is refused from its Content-Length, before it is read.
s = socket.create_connection((host, port), timeout=60)
s.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
          b"Content-Length: 3000000\r\n\r\n{\"prompt\": \"" + b"a" * 65536)
reply = b""
while b"\r\n\r\n" not in reply or not reply.rstrip().endswith(b"}"):
    part = s.recv(65536)
    if not part:
        break
    reply += part
s.close()
head, _, body = reply.partition(b"\r\n\r\n")
check(head.startswith(b"HTTP/1.1 413") and "error" in json.loads(body), f"an oversized body: {head[:12]!r}")
status, _ = raw("GET", "/v1/nothing", None)
check(status == 404, "an unknown endpoint: 404")

# A client that reads two events of a stream and hangs up.
s = socket.create_connection((host, port), timeout=60)
body = json.dumps({"prompt": "Once upon a time", "max_tokens": 200, "stream": True}).encode()
s.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: "
          + str(len(body)).encode() + b"\r\n\r\n" + body)
got = b""
while got.count(b"data:") < 2:
    part = s.recv(4096)
    if not part:
        break
    got += part
s.close()
check(got.count(b"data:") >= 2, "a stream starts, then its client disconnects")

status, data = raw("GET", "/health", None)
check(status == 200 and json.loads(data)["status"] == "ok", "the server still answers /health afterwards")
again = client.completions.create(model="m", prompt="Once upon a time", max_tokens=24, temperature=0)
check(again.choices[0].text == text, "and completes the same prompt the same way")

print(f"{'PASS' if not failures else 'FAIL'}: server test, {len(failures)} failures")
sys.exit(1 if failures else 0)
