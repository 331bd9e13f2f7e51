"""An outside job-search pipeline using karani over HTTP only (standard library, no karani
import): for each posting, get its working context, ask an OpenAI-compatible model, record
the decision; then record the outcomes that came later, and print the funnel.

    KARANI_URL=http://127.0.0.1:8000 KARANI_TOKEN=... LLM_BASE_URL=http://127.0.0.1:8080/v1 \\
        python examples/pipeline.py examples/postings.json

The token needs write rights (`karani api-token pipeline --create-user --writer`).
"""

import json
import os
import re
import sys
import urllib.error
import urllib.request
from pathlib import Path

KARANI = os.environ.get("KARANI_URL", "http://127.0.0.1:8000").rstrip("/")
TOKEN = os.environ["KARANI_TOKEN"]
LLM = os.environ.get("LLM_BASE_URL", "http://127.0.0.1:8080/v1").rstrip("/")
MODEL = os.environ.get("LLM_MODEL", "local-model")
ASK = (
    "You judge job postings for one candidate: a senior platform engineer who wants remote "
    "work and light on-call. Reply with one JSON object and nothing else: "
    '{"verdict": "qualified" or "rejected", "fit_score": 0-100, "reasons": "one sentence"}.'
)


def call(url: str, body: dict | None = None, headers: dict | None = None) -> dict:
    data = json.dumps(body).encode() if body is not None else None
    headers = {"Content-Type": "application/json", **(headers or {})}
    with urllib.request.urlopen(urllib.request.Request(url, data, headers), timeout=120) as r:
        return json.load(r)


def karani(path: str, body: dict | None = None) -> dict:
    return call(f"{KARANI}/api/{path}", body, {"Authorization": f"Token {TOKEN}"})


def judge(posting: dict, block: str) -> dict:
    text = json.dumps(posting, indent=1)
    messages = [
        {"role": "system", "content": ASK},
        {"role": "user", "content": f"{block}\n\n{text}"},
    ]
    reply = call(
        f"{LLM}/chat/completions", {"model": MODEL, "messages": messages, "temperature": 0}
    )
    content = reply["choices"][0]["message"]["content"]
    return json.loads(re.search(r"\{.*\}", content, re.S).group(0))  # models add prose or fences


def main(path: str) -> None:
    plan = json.loads(Path(path).read_text(encoding="utf-8"))
    for posting in plan["postings"]:
        context = karani("context", posting)  # POST: the whole posting, writes nothing
        answer = judge(posting, context["block"])
        try:
            decision = record(posting, context, answer)
        except urllib.error.HTTPError as exc:
            if exc.code != 409:
                raise
            # Judged before under this prompt version, differently: the first verdict stands.
            print(f"{posting['external_id']}: {json.load(exc)['error']['message']}")
            continue
        print(
            f"{posting['external_id']}: {decision['verdict']} {decision['fit_score']}"
            f" ({context['arm']}, {len(context['facts'])} facts)"
        )
    for outcome in plan.get("outcomes", []):  # later: what happened to the applications
        karani("outcomes", outcome)
    print(json.dumps(karani("funnel"), indent=2))


def record(posting: dict, context: dict, answer: dict) -> dict:
    return karani(
        "decisions",
        {
            **posting,  # external_id, company, title and the rest: the posting is recorded
            "verdict": answer["verdict"],
            "fit_score": max(0, min(100, int(answer["fit_score"]))),
            "reasons": str(answer.get("reasons", ""))[:300],
            "prompt_version": context["prompt_version"],  # the arm's version, as given
            "fact_ids": [fact["id"] for fact in context["facts"]],
        },
    )


if __name__ == "__main__":
    main(sys.argv[1])
