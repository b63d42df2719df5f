"""Injected instructions in memory text: the versioned rules of the injection scan.

A stored memory is later pasted into a model's prompt. Text that reads as instructions *to that
model* — "ignore previous instructions", chat-template role markers, a tool-call payload, or
characters a reader cannot see — is a poisoning attempt, whatever else the entry says. The scan
only *finds*: it returns the matched spans, and the caller files a ``quarantine`` proposal (or
puts the findings on a candidate's admission proposal). It never withholds anything itself.

The maintained detectors for this are classifier models whose weights come from a model hub at
run time, which this product does not do; these rules are plain, reviewable and versioned
(:data:`RULES_VERSION`, listed in ``docs/governance.md``). A change to any rule bumps the version,
and every finding names the version that produced it. ``manage.py evaluate --section injection``
measures precision and recall on the labelled set in ``evaluation/corpora/injection.json``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

RULES_VERSION = "injection:v1"
#: Longest matched text a finding keeps (spans keep the exact offsets).
MAX_MATCH_CHARS = 160
#: Findings reported per text at most.
MAX_FINDINGS = 20

_I = re.IGNORECASE | re.UNICODE

# "ignore / disregard / forget … previous / above … instructions", in the languages the labelled
# set covers. Each alternative needs both the verb and the object, so "ignore the lint warnings"
# or "the previous release notes" never match.
_OVERRIDE = [
    # English
    r"\b(?:ignore|disregard|forget|override|bypass|skip|drop)\s+(?:all\s+|any\s+|every\s+)?"
    r"(?:of\s+)?(?:the\s+|your\s+|my\s+|these\s+|those\s+)?"
    r"(?:previous|prior|preceding|earlier|above|former|original|existing|system|initial)\s+"
    r"(?:instructions?|prompts?|rules|directions|directives|guidelines|messages|context|orders)",
    r"\b(?:ignore|disregard|forget)\s+(?:everything|all)\s+(?:you\s+were\s+told|above|before"
    r"|(?:that\s+)?(?:came|comes)\s+before)",
    r"\byour\s+(?:new|real|true|updated)\s+instructions\s+(?:are|follow)",
    # German
    r"\b(?:ignorier(?:e|en|t)?|vergiss|vergessen\s+sie|missachte)\s+(?:bitte\s+)?(?:alle\s+)?"
    r"(?:die\s+|deine\s+|ihre\s+)?"
    r"(?:vorherigen|bisherigen|obigen|vorangegangenen|früheren)\s+"
    r"(?:Anweisungen|Instruktionen|Befehle|Regeln|Anordnungen)",
    # French
    r"\bignore[rz]?\s+(?:toutes\s+)?(?:les\s+)?(?:instructions|consignes|règles)\s+"
    r"(?:précédentes|antérieures|ci-dessus)",
    r"\boublie[rz]?\s+(?:toutes\s+)?(?:les\s+)?(?:instructions|consignes)\s+(?:précédentes)",
    # Spanish / Portuguese / Italian
    r"\b(?:ignora|ignore|olvida|ignorar|esquece|esqueça)\s+(?:todas\s+)?(?:las\s+|as\s+)?"
    r"(?:instrucciones|instruções|indicaciones)\s+(?:anteriores|previas|acima)",
    r"\bignora\s+(?:tutte\s+)?(?:le\s+)?(?:istruzioni)\s+(?:precedenti)",
    # Russian
    r"(?:игнорируй|игнорируйте|забудь|забудьте)\s+(?:все\s+)?(?:предыдущие|прежние)\s+"
    r"(?:инструкции|указания|правила)",
    # Chinese / Japanese
    r"(?:忽略|无视|忘记|忽視|無視)(?:掉)?(?:之前|以上|先前|上面|前面|所有)(?:的)?(?:所有)?(?:的)?"
    r"(?:指令|指示|说明|規則|规则|提示)",
    r"(?:以前|前|上記|これまで)の(?:指示|命令|ルール)を(?:すべて)?(?:無視|忘れ)",
]

# Chat-template and role markers a stored fact has no reason to contain, each with the words
# (lower-cased) a text must contain for the pattern to run.
_ADDRESSED = ("ai", "assistant", "model", "llm", "chatbot", "agent")
_ROLE: list[tuple[tuple[str, ...], str]] = [
    (
        ("<|",),
        r"<\|(?:im_start|im_end|system|assistant|user|endoftext|begin_of_text|start_header_id)\|>",
    ),
    (("inst]",), r"\[/?INST\]"),
    (("<<",), r"<<\s*/?SYS\s*>>"),
    (("<", ">"), r"</?\s*(?:system|system_prompt|assistant)\s*>"),
    (("##",), r"(?:^|\n)\s*#{2,}\s*(?:system|instruction|new instructions?)\s*:?\s*(?:\n|$)"),
    (("system",), r"(?:^|\n)\s*(?:system|SYSTEM)\s*(?:prompt)?\s*:\s*you\s+(?:are|must|will)\b"),
    (
        ("you are now",),
        r"\byou\s+are\s+now\s+(?:in\s+)?(?:DAN|developer\s+mode|jailbroken|an?\s+unrestricted)",
    ),
    ((" mode",), r"\b(?:enter|enable|activate)\s+(?:developer|god|jailbreak|DAN)\s+mode\b"),
    (
        ("prompt", "instructions"),
        r"\b(?:reveal|print|repeat|output|show|leak|disclose)\s+(?:me\s+)?(?:your|the)\s+"
        r"(?:full\s+|entire\s+|hidden\s+)?(?:system\s+prompt|initial\s+instructions|hidden\s+"
        r"instructions)",
    ),
    # The model addressed directly with a standing order.
    (
        tuple(f"{w}{sep}" for w in _ADDRESSED for sep in (",", ":", " ,", " :")),
        r"\b(?:AI|assistant|model|LLM|chatbot|agent)\s?[,:]\s*(?:from\s+now\s+on|always|you\s+must"
        r"|never\s+tell|do\s+not\s+tell|ignore)\b",
    ),
    (("from now on",), r"\bfrom\s+now\s+on,?\s+you\s+(?:must|will|should|are\s+to)\b"),
    (
        ("when",),
        r"\bwhen(?:ever)?\s+you\s+(?:read|see|recall|retrieve|load)\s+this\s+(?:memory|note|entry"
        r"|message)",
    ),
]

# Tool-call payloads: the shapes model providers and agent frameworks parse as a call.
_TOOL = [
    r"</?\s*(?:tool_call|tool_use|function_call|function_calls|invoke|antml:invoke)\b",
    r"\"(?:tool_calls|function_call|tool_use)\"\s*:",
    r"\{\s*\"name\"\s*:\s*\"[\w.\-]+\"\s*,\s*\"(?:arguments|parameters|input)\"\s*:",
    r"```\s*(?:tool_code|tool_call|function_call)\b",
    r"\b(?:call|invoke|run|execute)\s+the\s+(?:tool|function)\s+[`'\"]?\w+[`'\"]?\s+with\b",
]

#: Words one of which a text must contain (lower-cased) for a rule's patterns to run at all: a
#: substring test is a hundred times cheaper than the patterns, and most memories hold none.
_OVERRIDE_ANCHORS = (
    "ignor", "disregard", "forget", "overrid", "bypass", "skip", "drop", "instructions",
    "vergiss", "vergessen", "missacht", "oubli", "olvid", "esquec", "игнор", "забуд",
    "忽略", "无视", "忘记", "忽視", "無視", "指示", "命令", "ルール",
)  # fmt: skip
_TOOL_ANCHORS = ("tool", "function", "invoke", '"name"', "```")

Pattern = tuple[tuple[str, ...], re.Pattern[str]]
_RULES: dict[str, list[Pattern]] = {
    "instruction_override": [(_OVERRIDE_ANCHORS, re.compile(p, _I)) for p in _OVERRIDE],
    "role_marker": [(anchors, re.compile(p, _I)) for anchors, p in _ROLE],
    "tool_call": [(_TOOL_ANCHORS, re.compile(p, _I)) for p in _TOOL],
}

_ALL_ANCHORS = frozenset(
    a for patterns in _RULES.values() for anchors, _ in patterns for a in anchors
)

#: Unicode tag characters (U+E0000–U+E007F): invisible, yet read by models as ASCII.
_TAGS = re.compile("[\U000e0000-\U000e007f]+")
#: A subdivision flag (🏴 + tag letters/digits + CANCEL TAG): the one legitimate use of tags.
_FLAG = re.compile("\U0001f3f4[\U000e0030-\U000e0039\U000e0061-\U000e007a]{2,8}\U000e007f")

RULE_NAMES = (*_RULES, "hidden_unicode")


@dataclass(frozen=True)
class Finding:
    """One matched span: ``text[start:end]`` matched ``rule``."""

    rule: str
    start: int
    end: int
    match: str

    def as_json(self) -> dict[str, object]:
        return {"rule": self.rule, "start": self.start, "end": self.end, "match": self.match}


def _shown(text: str) -> str:
    """The matched text as a reviewer can read it: invisible tag characters decoded."""
    decoded = "".join(
        f"<U+{ord(c):05X}:{chr(ord(c) - 0xE0000)}>"
        if 0xE0020 <= ord(c) <= 0xE007E
        else f"<U+{ord(c):05X}>"
        if 0xE0000 <= ord(c) <= 0xE007F
        else c
        for c in text
    )
    return decoded[:MAX_MATCH_CHARS]


def scan(text: str) -> list[Finding]:
    """Every rule's matches in ``text``, in order of position (at most ``MAX_FINDINGS``)."""
    found: list[Finding] = []
    lowered = text.lower()
    present = {anchor for anchor in _ALL_ANCHORS if anchor in lowered}
    for rule, patterns in _RULES.items():
        for anchors, pattern in patterns:
            if present.isdisjoint(anchors):
                continue
            for m in pattern.finditer(text):
                found.append(Finding(rule, m.start(), m.end(), _shown(m.group(0))))
    has_tags = max(text, default="") >= "\U000e0000"
    flags = [(m.start(), m.end()) for m in _FLAG.finditer(text)] if has_tags else []
    for m in _TAGS.finditer(text) if has_tags else ():
        inside_flag = any(s < m.start() and m.end() <= e for s, e in flags)
        if not inside_flag:
            found.append(Finding("hidden_unicode", m.start(), m.end(), _shown(m.group(0))))
    found.sort(key=lambda f: (f.start, f.end, f.rule))
    # Overlapping patterns of one rule report the span once.
    unique: list[Finding] = []
    for f in found:
        if unique and unique[-1].rule == f.rule and f.start < unique[-1].end:
            continue
        unique.append(f)
    return unique[:MAX_FINDINGS]


def findings_json(findings: list[Finding]) -> dict[str, object]:
    """The findings as stored on a proposal: the rules version and the spans."""
    return {
        "rules_version": RULES_VERSION,
        "rules": sorted({f.rule for f in findings}),
        "spans": [f.as_json() for f in findings],
    }
