"""karani's own credential rules, for what scanners do not read: credentials written in
sentences (English, German, French, Spanish), "user / password" pairs, ``curl --user``,
``Authorization: Basic``, connection strings and a token named by a keyword beside it.

Each rule gives the span of the value alone, so redaction keeps the sentence around it.
"""

import base64
import binascii
import re
from collections.abc import Iterator

from memory.scanner import Span

# Words that name a credential, in the four languages karani's users write notes in.
_KEYWORDS = (
    r"pass(?:word|wd|phrase|code)?|pwd|pw|pin(?:[ _-]?code)?|passwort|kennwort|zugangscode"
    r"|mot de passe|mdp|code d'acc[eè]s|contrase[nñ]a|clave(?: api)?|secret|api[_ -]?key"
    r"|api[_ -]?schl[uü]ssel|cl[eé](?: api| d'api)?|access[_ -]?(?:key|code|token)"
    r"|auth[_ -]?token|token|client[_ -]?secret"
)
# Words that may stand between the keyword and the verb: "the password FOR THE PORTAL is …".
_BETWEEN = (
    r"(?:\s+(?:for|to|of|on|at|f[uü]r|f[uü]rs|zum|zur|vom|von|bei|du|de|des|pour|del|para|en)"
    r"\s+[^.,;:!?=\n]{1,40}?)?"
)
_VERBS = r"is|was|are|ist|war|lautet|lauten|est|[eé]tait|es|era"
# "password=hunter2", "the password for the portal is Sunshine99", "Passwort ist X",
# "le mot de passe du portail est X", "la contraseña del portal es X".
_ASSIGNED = re.compile(
    rf"(?<![\w-])(?P<key>{_KEYWORDS})(?![\w-]){_BETWEEN}"
    rf"\s*(?P<op>:=|=>|=|:|\s(?:{_VERBS})\s)\s*"
    r"(?P<quote>[\"'])?(?P<value>[^\s\"']{4,})",
    re.IGNORECASE,
)
# "password Sunshine85%mh", "the passcode Falke63&hc at login": no verb, so the value must
# look like a password on its own.
_BARE = re.compile(
    rf"(?<![\w-])(?P<key>{_KEYWORDS})\s+(?P<value>[^\s\"']{{6,}})",
    re.IGNORECASE,
)
# Configuration-style names: AWS_SECRET_ACCESS_KEY=…, mailgun_api_key = "…", OP_TOKEN: …
_IDENTIFIER = re.compile(
    r"(?<![\w.-])(?P<key>[A-Za-z0-9_.-]*?(?:pass(?:word|wd)?|pwd|secret|token|api_?key|apikey"
    r"|access_?key|private_?key|auth)[A-Za-z0-9_.-]*)\s*(?P<op>:=|=>|=|:)\s*"
    r"(?P<quote>[\"'])?(?P<value>[^\s\"',;]{8,})",
    re.IGNORECASE,
)
# Keywords that name nothing but a credential: after "=" or ":=" their value is refused
# whatever it looks like ("password=hunter"); "secret = sauce" is left to the shape rule.
_STRONG = re.compile(
    r"pass(?:word|wd|phrase|code)?|pwd|pw|passwort|kennwort|api[_ -]?key|client[_ -]?secret",
    re.IGNORECASE,
)
# "login: jdoe / Sunshine99", "Acceso al portal: jgarcia / X", "usuario: x / contraseña: y".
_PAIR = re.compile(
    r"(?<![\w-])(?:log[ -]?in|user(?:name)?|account|benutzer(?:name)?|konto|zugang(?:sdaten)?"
    r"|identifiant|utilisateur|compte|connexion|usuario|cuenta|acceso)(?![\w-])"
    r"[^\n/]{0,40}?[\s:=]\s*(?P<user>[\w.@+-]{2,64})\s*/\s*"
    rf"(?:(?:{_KEYWORDS})\s*[:=]?\s*)?(?P<value>[^\s/]{{4,}})",
    re.IGNORECASE,
)
_CURL = re.compile(
    r"\bcurl\b[^\n]*?\s(?:-u|--user)(?:\s+|=)[\"']?[^\s:\"']*:(?P<value>[^\s\"']+)",
    re.IGNORECASE,
)
_BASIC = re.compile(r"\bbasic\s+(?P<value>[A-Za-z0-9+/]{8,}={0,2})(?![\w+/=])", re.IGNORECASE)
_BEARER = re.compile(r"\bbearer\s+(?P<value>[A-Za-z0-9\-._~+/]{16,}=*)", re.IGNORECASE)
# scheme://user:password@host, any scheme (the scanner knows a fixed list) and an empty user.
_URI = re.compile(r"\b[a-z][a-z0-9+.\-]*://[^\s:/@]*:(?P<value>[^\s@/]+)@", re.IGNORECASE)
_PRIVATE_KEY = re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY( BLOCK)?-----(?:\s*[A-Za-z0-9+/=]+)*")
# An AWS key id alone: the scanner reports one only beside its secret.
_AWS_KEY_ID = re.compile(r"\b(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16}\b")
# A classic GitHub token split after its prefix ("ghp_ 1234…"), which no exact shape matches.
_SPLIT_GITHUB = re.compile(r"\bgh[pousr]_\s+[A-Za-z0-9]{36}\b")
# Model-provider keys in shapes the scanner's exact rules do not take (no marker infix).
_SK_KEY = re.compile(r"\bsk-(?:(?:proj|ant|svcacct|admin)-[A-Za-z0-9_\-]{20,}|[A-Za-z0-9]{32,})\b")
# A hex or base64 run is a credential only when a credential word stands just before it
# ("webhook secret da39…"); a commit SHA, a digest or an id with no such word is not.
_IN_CONTEXT = re.compile(
    r"(?<![\w-])(?:secret|token|password|passwort|api[ _-]?key|access[ _-]?key|secret[ _-]?key"
    r"|private[ _-]?key|webhook|credential|bearer|auth)s?(?![\w-])(?:\s+[\w-]+){0,2}?\s+"
    r"(?P<value>(?=[A-Za-z0-9+/_-]*\d)(?=[A-Za-z0-9+/_-]*[A-Za-z])[A-Za-z0-9+/_-]{20,}=*)",
    re.IGNORECASE,
)
# A value looks like a credential when it has a digit, a symbol or a lower-to-upper hump;
# "their secret is teamwork" and "secret: they prefer Go over Rust" are ordinary sentences.
_CREDENTIAL_SHAPE = re.compile(r"\d|[a-z][A-Z]|[^\w]")
_TRAILING_PUNCT = ".,;:!?)"
REDACTED = "[redacted"
# Meeting links carry their passcode hash in the query (zoom.us/j/…?pwd=…): an invitation.
_MEETING_QUERY = re.compile(r"https?://[\w.-]*zoom\.us/\S*[?&]$", re.IGNORECASE)
_WEBHOOK = re.compile(
    r"https://(?:(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/\d+/[\w-]{60,}"
    r"|[\w-]+\.webhook\.office\.com/webhookb2/\S+|chat\.googleapis\.com/v1/spaces/\S+token=\S+)",
    re.IGNORECASE,
)
_MAILGUN = re.compile(r"\b(?:pub)?key-[a-f0-9]{32}\b")
SECRET_KEYWORD = "Secret Keyword"


def _value(match: re.Match[str]) -> tuple[str, int, int]:
    value = match.group("value").rstrip(_TRAILING_PUNCT)
    start = match.start("value")
    return value, start, start + len(value)


def looks_like_credential(value: str) -> bool:
    value = value.rstrip(_TRAILING_PUNCT)
    return len(value) >= 4 and bool(_CREDENTIAL_SHAPE.search(value))


def _password_like(value: str) -> bool:
    """A bare word that reads as a password: letters and digits, or letters and symbols."""
    has_alpha = any(c.isalpha() for c in value)
    return has_alpha and (any(c.isdigit() for c in value) or bool(re.search(r"[^\w]", value)))


def _in_meeting_link(text: str, match: re.Match[str]) -> bool:
    line_start = text.rfind("\n", 0, match.start()) + 1
    return bool(_MEETING_QUERY.search(text[line_start : match.start()]))


def _assigned(text: str) -> Iterator[Span]:
    for match in _ASSIGNED.finditer(text):
        value, start, end = _value(match)
        if len(value) < 4 or value.startswith(REDACTED) or _in_meeting_link(text, match):
            continue
        code_like = match.group("op").strip() in {"=", ":="} and _STRONG.fullmatch(
            match.group("key")
        )
        if code_like or match.group("quote") or looks_like_credential(value):
            yield Span(SECRET_KEYWORD, start, end)
    for match in _BARE.finditer(text):
        value, start, end = _value(match)
        if len(value) >= 6 and _password_like(value) and not value.startswith(REDACTED):
            yield Span(SECRET_KEYWORD, start, end)
    for match in _IDENTIFIER.finditer(text):
        value, start, end = _value(match)
        if text[match.start() - 1 : match.start()] in {"?", "&"}:  # a URL's query: one parameter
            value = value.split("&", 1)[0]
            end = start + len(value)
        if value.startswith(REDACTED) or _in_meeting_link(text, match):
            continue
        if len(value) >= 8 and (_CREDENTIAL_SHAPE.search(value) or match.group("quote")):
            yield Span(SECRET_KEYWORD, start, end)


def _pairs(text: str) -> Iterator[Span]:
    for match in _PAIR.finditer(text):
        value, start, end = _value(match)
        if _password_like(value) and not value.startswith(REDACTED):
            yield Span("User Password Pair", start, end)


def _basic_auth(text: str) -> Iterator[Span]:
    for match in _BASIC.finditer(text):
        try:
            decoded = base64.b64decode(match.group("value"), validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError):
            continue
        if ":" in decoded:  # user:password, as RFC 7617 encodes it
            yield Span("Basic Auth Credentials", match.start("value"), match.end("value"))


_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", re.I)

_SHAPES: list[tuple[str, re.Pattern[str]]] = [
    ("Curl Credentials", _CURL),
    ("Bearer Token", _BEARER),
    ("Connection String Password", _URI),
    ("Private Key", _PRIVATE_KEY),
    ("AWS Access Key", _AWS_KEY_ID),
    ("GitHub Token", _SPLIT_GITHUB),
    ("API Key", _SK_KEY),
    ("Webhook URL", _WEBHOOK),
    ("Mailgun Key", _MAILGUN),
    ("Token In Context", _IN_CONTEXT),
]


def find(text: str) -> list[Span]:
    """Every span karani's own rules flag in ``text`` (already folded to ASCII look-alikes)."""
    spans = [*_assigned(text), *_pairs(text), *_basic_auth(text)]
    for kind, pattern in _SHAPES:
        for match in pattern.finditer(text):
            if "value" in pattern.groupindex:
                value = match.group("value")
                # An id in context is still an id: "auth request 123e4567-e89b-…".
                uuid = kind == "Token In Context" and _UUID.fullmatch(value)
                if not value.startswith(REDACTED) and not uuid:
                    spans.append(Span(kind, match.start("value"), match.end("value")))
            else:
                spans.append(Span(kind, match.start(), match.end()))
    return spans
