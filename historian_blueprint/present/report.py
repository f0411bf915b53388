"""Readable renderings of the output schema (Markdown report) and of a claim's outcome, as pages show it."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from typing import Any, Literal, NamedTuple
from urllib.parse import quote

from historian_blueprint.schema import OUTCOME_LABELS, STATUS_LABELS, outcome_group
from historian_blueprint.text.labels import source_label
from historian_blueprint.text.markdown import md_escape


class Outcome(NamedTuple):
    """How a claim's verdict is shown: its group (the CSS class ``h-outcome-<group>``), the plain label, and
    what its evidence span is to the reader."""

    group: Literal["supported", "unconfirmed", "conflict"]
    label: str
    span: str


_SPAN_LABELS = {"supported": "carried by", "unconfirmed": "closest passage (read it)", "conflict": "the source says"}


def outcome(verdict: str) -> Outcome:
    """The outcome a user sees for a verdict: supported, a conflict a check found, or unconfirmed. Any other
    verdict (the "unsupported" of runs stored before the three outcomes) is unconfirmed: never verified, never
    shown as a contradiction."""
    group = outcome_group(verdict)
    return Outcome(group, OUTCOME_LABELS.get(verdict, OUTCOME_LABELS["unconfirmed"]), _SPAN_LABELS[group])


def outcome_counts(verdicts: Iterable[str]) -> str:
    """The three outcomes counted apart, in plain words: "3 supported, 1 not confirmed, 0 contradicted" (a
    misquote or a misattribution counts as contradicted: a conflict the checks found)."""
    n = Counter(outcome(v).group for v in verdicts)
    return f"{n['supported']} supported, {n['unconfirmed']} not confirmed, {n['conflict']} contradicted"


class StatusWords(NamedTuple):
    """The answer's standing in plain words: its group (the CSS class ``h-status-<group>``), a short label and
    one sentence that says why. The same words on the page, in the Markdown report and in the run list."""

    group: Literal["verified", "check", "unverified", "absent", "failed"]
    label: str
    sentence: str


def collection_words(collection: dict[str, Any] | None) -> str:
    """"its 319 documents date from 1860 to 1945" (empty when the run did not record the collection)."""
    if not collection or not collection.get("documents"):
        return ""
    years = collection.get("years") or []
    span = f" date from {years[0]} to {years[1]}" if len(years) == 2 and years[0] != years[1] else ""
    return f"its {collection['documents']} documents{span}"


def status_words(output: dict[str, Any]) -> StatusWords:
    """What the status, the confidence and the claims mean together, said once and without contradiction:
    a refusal is "not in this collection" (an answer, not a failure), a run that failed says so, and an answer is
    verified only when every claim is supported."""
    meta = output.get("metadata") or {}
    claims = output.get("claims") or []
    n = len(claims)
    if output.get("refusal"):  # a run's output before its metadata is written (the graph's last node)
        meta = {**meta, "refusal": True}
    supported = sum(outcome(c["verdict"]).group == "supported" for c in claims)
    conflicts = sum(outcome(c["verdict"]).group == "conflict" for c in claims)
    if meta.get("refusal"):
        about = collection_words(meta.get("collection"))
        return StatusWords("absent", "not in this collection",
                           "The collection does not answer this question" + (f" ({about})" if about else "")
                           + "; the closest passages are named below, to read for yourself.")
    if not output.get("citations"):
        return StatusWords("failed", "could not answer",
                           "Historian could not compose a checked answer; see the run details.")
    premise = (output.get("verification") or {}).get("premise")
    counted = f"{supported} of {n} claims are supported by the passages they cite"
    if conflicts:
        counted += f", {conflicts} {'is' if conflicts == 1 else 'are'} contradicted by a source"
    if output["status"] == "verified":
        return StatusWords("verified", "verified", f"Every claim is supported by the passage it cites ({counted}).")
    if premise and output["status"] == "flagged":  # the label is the status's; the sentence says what is missing
        return StatusWords("check", STATUS_LABELS["flagged"],
                           f"The quotes are accurate ({counted}), but {premise['finding']}.")
    verification = output.get("verification") or {}
    compared = verification.get("comparison") or verification.get("open_list")  # what the checks cannot confirm
    if output["status"] == "flagged" and compared:
        return StatusWords("check", STATUS_LABELS["flagged"],
                           f"The quotes are accurate ({counted}); {compared['finding']}.")
    if output["status"] == "flagged":
        return StatusWords("check", STATUS_LABELS["flagged"],
                           f"{counted[0].upper()}{counted[1:]}; read the others in their sources.")
    missing = f"; and {premise['finding']}" if premise else ""  # what of the question no cited passage bears out
    return StatusWords("unverified", STATUS_LABELS["human_review"], f"{counted[0].upper()}{counted[1:]}{missing}; "
                       "this answer needs a careful reading of its sources.")


_GROUPS = {"verified": "verified", "flagged": "check", "needs_revision": "unverified", "human_review": "unverified"}


def status_label(output: Any) -> tuple[str, str]:
    """(group, label) for a list that keeps only a run's summary (the standing ``status_words`` gave when the run
    was stored: ``output["standing"]``) and for a checked draft (a dict or a ``Verification``): the same words as
    ``status_words`` ("not in this collection" for a refusal)."""
    def field(name: str) -> Any:
        return output.get(name) if isinstance(output, dict) else getattr(output, name, None)

    standing = field("standing")
    if standing:
        return standing["group"], standing["label"]
    if (field("metadata") or {}).get("refusal"):
        return "absent", "not in this collection"
    status = field("status")
    return _GROUPS.get(status, "unverified"), STATUS_LABELS.get(status, STATUS_LABELS["human_review"])


def confidence_words(confidence: float, status: str = "verified") -> str:
    """"high (0.86)": the confidence as a word and its figure (the figure alone reads as a grade). Beside an answer
    that is not verified it is the quotes' alone, and says so: never "high" beside "check before use"."""
    if status != "verified":
        return f"{confidence:.2f}, for its quotes alone"
    word = "high" if confidence >= 0.8 else "medium" if confidence >= 0.5 else "low"
    return f"{word} ({confidence:.2f})"


def to_markdown(output: dict[str, Any], question: str | None = None, labels: dict[int, str] | None = None,
                references: Iterable[str] = ()) -> str:
    """A readable report: the answer, its standing in plain words, findings, sources (with who, what, when and
    where), every claim whole with its outcome and evidence, the four reports' summaries, and the references
    (``references``: bibliography entries, e.g. Chicago's). No run ids, offsets or field names. Every field that came
    from a document or a user is written as text (``md_escape``): no raw HTML, no links it did not make, no line that
    its metadata opens as a list, a heading or a formula."""
    e = md_escape
    labels = labels or {}
    words = status_words(output)
    lines = []
    if question:
        lines += [f"# {e(question)}", ""]
    confidence = ("" if words.group in ("absent", "failed")  # never beside a refusal or a failure
                  else f" Confidence: {confidence_words(output['confidence'], output['status'])}.")
    lines += [f"**{e(words.label[0].upper() + words.label[1:])}.** {e(words.sentence)}{confidence}", "",
              e(output["answer"]), ""]
    if output["bullets"]:
        lines += ["## Findings", ""] + [f"- {e(b)}" for b in output["bullets"]] + [""]
    if output["citations"]:
        lines += ["## Sources", ""]
        for c in output["citations"]:
            lines.append(f"[{c['id']}] {e(labels.get(c['id']) or source_label(c))}: “{e(' '.join(c['text'].split()))}”")
            lines.append("")
    if output["claims"]:
        lines += ["## Claims checked", "", outcome_counts(c["verdict"] for c in output["claims"]), "",
                  "| # | outcome | claim | evidence |", "| --- | --- | --- | --- |"]
        for c in output["claims"]:
            shown, span = outcome(c["verdict"]), c.get("evidence")
            where = f" ({e(span['locator'])})" if span and span.get("locator") else ""
            quote = f"{shown.span}: “{e(' '.join(span['text'].split()))}”{where}" if span else ""
            lines.append(f"| {c['id']} | {e(shown.label)} | {e(' '.join(c['text'].split()))} | {quote} |")
        lines.append("")
    v = output.get("verification") or {}
    roles = [(label, v[key]) for key, label in REPORT_ROLES if key in v]
    if roles:
        lines += ["## How it was checked", ""] + [f"- **{label}**: {e(r.get('summary', ''))}"
                                                  for label, r in roles] + [""]
    entries = [e(r) for r in references if r.strip()]
    if entries:
        lines += ["## References", ""] + [line for r in entries for line in (r, "")]
    return "\n".join(lines).rstrip() + "\n"


_ASSESSMENTS = {"exact": "quoted exactly", "paraphrase": "a fair paraphrase", "misquote": "misquoted",
                "out_of_context": "does not say what the claim says", "missing": "no passage found"}
# Why an answer is not verified, beside the label it shares with the page (status_words): the judge's paragraph says it.
_WHY_NOT = {"needs_revision": " (its findings that were not confirmed are to be revised)",
            "human_review": " (it needs a human reader)"}


class ReportView(NamedTuple):
    """One verifier's report as a reader takes it: a short paragraph, a table (its head and rows) and the raw
    report for those who want it."""

    key: str
    role: str
    paragraph: str
    head: tuple[str, ...]
    rows: list[tuple[str, ...]]
    raw: dict[str, Any]


def report_views(output: dict[str, Any], standing: str | None = None) -> list[ReportView]:
    """The challenger, interrogator, counter-arguer and judge in plain words, in that order (absent ones left out):
    of an answer's output, or of a checked draft (a ``Verification`` dumped: its reports stand beside its claims;
    ``standing``: its label, as its page shows it)."""
    v = output.get("verification") or {key: output[key] for key in ("challenge", "interrogation", "counter", "judge")
                                        if output.get(key)}
    claims = {c["id"]: c for c in output.get("claims") or []}
    sources = {c["source_id"]: source_label({**c, "locator": None}) for c in output.get("citations") or []}
    views = []
    if "challenge" in v:
        r = v["challenge"]
        weak = r.get("weaknesses") or []
        text = (f"The challenger read each of the {len(claims)} claims against its evidence and found "
                + (f"{len(weak)} weak point{'s' if len(weak) != 1 else ''}" if weak else "no weak point")
                + (", at least one of them serious" if r.get("critical") else "") + ".")
        rows = [(str(w["claim_id"]), _claim_text(claims, w["claim_id"]), w["severity"], w["issue"]) for w in weak]
        views.append(ReportView("challenge", "Challenger", text, ("#", "claim", "severity", "weak point"), rows, r))
    if "interrogation" in v:
        r = v["interrogation"]
        checks = r.get("citations") or []
        good = sum(ch["assessment"] in ("exact", "paraphrase") for ch in checks)
        text = (f"The interrogator asked of every citation whether the passage says what its claim says: "
                f"{good} of {len(checks)} do.")
        rows = [(str(ch["claim_id"]), _claim_text(claims, ch["claim_id"]),
                 sources.get(ch.get("source_id"), ch.get("source_id") or "none"),
                 _ASSESSMENTS.get(ch["assessment"], ch["assessment"])) for ch in checks]
        views.append(ReportView("interrogation", "Interrogator", text,
                                ("#", "claim", "source", "the passage is"), rows, r))
    if "counter" in v:
        r = v["counter"]
        if r.get("opposing_reading"):
            text = ("The counter-arguer looked for a passage that reads the other way and found one: "
                    f"{r['opposing_reading']}")
        else:
            text = ("The counter-arguer looked in the retrieved passages for one that reads the other way "
                    "and found none.")
        rows = [(sources.get(ev.get("source_id"), ev.get("source_id") or ""), ev.get("locator") or "",
                 " ".join(str(ev.get("text", "")).split()))
                for ev in r.get("evidence") or []]
        views.append(ReportView("counter", "Counter-arguer", text, ("source", "where", "passage"), rows, r))
    if "judge" in v:
        r = v["judge"]
        status = (standing or status_words(output).label) + _WHY_NOT.get(r.get("status"), "")  # as every place says
        penalty = max(0.0, r.get("base", 0) - r.get("confidence", 0))
        text = (f"The judge weighed the three reports: the claims' own confidence is {r.get('base', 0):.2f}, "
                f"the reports take {penalty:.2f} off, leaving {r.get('confidence', 0):.2f}. Its standing: {status}.")
        rows = [(item,) for item in r.get("required_revisions") or []]
        views.append(ReportView("judge", "Judge", text, ("what would have to change",), rows, r))
    return views


def _claim_text(claims: dict[int, dict[str, Any]], claim_id: int) -> str:
    return " ".join(str((claims.get(claim_id) or {}).get("text", "")).split())


REPORT_ROLES = (("challenge", "Challenger"), ("interrogation", "Interrogator"), ("counter", "Counter-arguer"),
                ("judge", "Judge"))


# Characters a URL may carry as they are: RFC 3986's unreserved and reserved ones, "%" (its own escapes) and letters
# and digits of any script. Anything else ({ } \ | ^ ` " < > and the like) is percent-encoded.
_URL_UNSAFE = re.compile(r"[^\w\-.~:/?#\[\]@!$&'()*+,;=%]")


def safe_url(url: Any) -> str | None:
    """The URL when it is plain http(s) on one line, with every character that is not a URL character (braces,
    backslashes, double quotes, angle brackets) percent-encoded; None otherwise (``javascript:``, ``data:``, a URL with
    spaces or control characters). Nothing in it can close a BibTeX field or open markup in any export."""
    if not isinstance(url, str) or not re.fullmatch(r"https?://[^\s\x00-\x1f\x7f]+", url.strip(), re.I):
        return None
    return _URL_UNSAFE.sub(lambda m: quote(m.group(), safe=""), url.strip())


def draft_report(result: dict[str, Any]) -> str:
    """A checked draft (``verify/service.check_draft``'s output) in words: its status and confidence, the outcomes
    counted, each claim with its outcome, evidence and reason (where it is not supported), the four reports."""
    standing = status_label(result)[1]
    lines = [f"Status: {standing} · confidence {confidence_words(result['confidence'], result['status'])}",
             outcome_counts(c["verdict"] for c in result["claims"])]
    for c in result["claims"]:
        shown = outcome(c["verdict"])
        lines.append(f"  [{c['id']}] {shown.label}: {c['text'][:90]}")
        evidence = c.get("evidence")
        if evidence:
            where = evidence.get("locator") or f"chars {evidence['start']}–{evidence['end']}"
            lines.append(f"       {shown.span} {evidence['source_id']}, {where}: “{evidence['text'][:200]}”")
        if c["verdict"] != "supported":
            lines.append(f"       {c['reason']}")
    lines += [f"  {role}: {result[role]['summary']}" for role in ("challenge", "interrogation", "counter", "judge")]
    return "\n".join(lines)
