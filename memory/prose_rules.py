"""karani's own credential rules, for what scanners do not read: credentials written in
sentences (English, German, French, Spanish), "user / password" pairs, ``curl --user``,
``Authorization: Basic``, connection strings and a token named by a keyword beside it.

Each rule gives the span of the value alone, so redaction keeps the sentence around it.
"""

import base64
import binascii
import re
from collections.abc import Iterator
from urllib.parse import unquote

from memory.scanner import Span


class _Rule:
    """A case-insensitive rule, run case-sensitively on the lower-cased text when the text is
    ASCII: the same matches at the same places (an ASCII letter's other case is ASCII, and
    the rules' own letters are lower case), at about half the cost (docs/security.md)."""

    def __init__(self, pattern: str) -> None:
        self.any_case = re.compile(pattern, re.IGNORECASE)
        self.lower = re.compile(pattern)

    def finditer(self, text: str, lowered: str | None) -> Iterator[re.Match[str]]:
        """Matches in ``text``, read in ``lowered`` (its ASCII lower case) when given."""
        return self.any_case.finditer(text) if lowered is None else self.lower.finditer(lowered)

    def search(self, text: str, lowered: str | None) -> re.Match[str] | None:
        return self.any_case.search(text) if lowered is None else self.lower.search(lowered)


# Words that name a credential, in the four languages karani's users write notes in.
_KEYWORDS = (
    r"pass(?:word|wd|phrase|code)?|pwd|pw|pin(?:[ _-]?code)?|\w*passwort|\w*kennwort"
    r"|zugangscode|mot de passe|mdp|code d'acc[eè]s|contrase[nñ]a|clave(?: api)?|secret"
    r"|api[_ -]?key|api[_ -]?schl[uü]ssel|cl[eé](?: api| d'api)?|access[_ -]?(?:key|code|token)"
    r"|auth[_ -]?token|token|client[_ -]?secret"
)
# Words that may stand between the keyword and the verb: "the password FOR THE PORTAL is …".
_BETWEEN = (
    r"(?:\s+(?:for|to|of|on|at|f[uü]r|f[uü]rs|zum|zur|vom|von|bei|du|de|des|pour|del|para|en)"
    r"\s+[^.,;:!?=\n]{1,40}?)?"
)
_VERBS = r"is|was|are|ist|war|lautet|lauten|est|[eé]tait|es|era"
_OP = rf"(?P<op>:=|=>|=|:|\s(?:{_VERBS})\s)"
# "password=hunter2", "the password for the portal is Sunshine99", "Passwort ist X",
# "le mot de passe du portail est X", "la contraseña del portal es X".
_ASSIGNED = _Rule(
    rf"(?<!\w)(?P<key>{_KEYWORDS})(?![\w-]){_BETWEEN}\s*{_OP}\s*"
    r"(?P<quote>[\"'])?(?P<value>[^\s\"']{4,})",
)
# Any few words between a password word and the value ("Mot de passe temporaire envoyé par
# le recruteur : X"): then only a value that reads as a password on its own counts.
_PASSWORD_WORDS = (
    r"pass(?:word|wd|phrase|code)?|pwd|\w*passwort|\w*kennwort|mot de passe|mdp"
    r"|contrase[nñ]a|clave"
)
_ASSIGNED_WIDE = _Rule(
    rf"(?<!\w)(?P<key>{_PASSWORD_WORDS})(?![\w-])(?:\s+[^\s.,;:!?=]+){{1,6}}?\s*{_OP}\s*"
    r"(?P<quote>[\"'])?(?P<value>[^\s\"']{6,})",
)
# "password Sunshine85%mh", "the passcode Falke63&hc at login": no verb, so the value must
# look like a password on its own.
_BARE = _Rule(
    rf"(?<!\w)(?P<key>{_KEYWORDS})\s+(?P<value>[^\s\"']{{6,}})",
)
# Configuration-style names: AWS_SECRET_ACCESS_KEY=…, mailgun_api_key = "…", OP_TOKEN: …,
# JSON's quoted ones ("client_secret": "…"), and code's: `var apiToken string = "…"`,
# `$apiToken .= "…"`, `API_TOKEN ?= "…"`, `setProperty("API_TOKEN", "…")`.
_KEY_NAME = (
    r"[A-Za-z0-9_.-]*?(?:pass(?:word|wd)?|pwd|secret|token|api_?key|apikey|access_?key"
    r"|private_?key|auth|creds?|credentials?)[A-Za-z0-9_.-]*"
)
_IDENTIFIER = _Rule(
    rf"(?<![\w.-])(?P<keyquote>[\"'])?(?P<key>{_KEY_NAME})(?(keyquote)(?P=keyquote))"
    r"(?:\s+(?:string|String|str))?\s*(?P<op>:{1,3}=|[?.+]=|=>|=|:|(?(keyquote),|(?!)))\s*"
    r"(?P<quote>[\"'`])?(?P<value>[^\s\"'`,;]{8,})",
)
_TAGS = re.compile(r"<[^<>]*>")
# The same names in XML: <apiToken>…</apiToken>, <entry name="apiToken" value="…" />.
_XML = re.compile(
    rf"<(?P<key>{_KEY_NAME})(?:\s[^<>]*)?>\s*(?P<value>(?:[^<>\s]|<[^<>]*>){{8,}}?)\s*"
    r"</(?P=key)\s*>"
    rf"|\b(?:name|key)\s*=\s*[\"'](?P<attr>{_KEY_NAME})[\"']\s+value\s*=\s*[\"']"
    r"(?P<attrvalue>[^\"'\s]{8,})[\"']",
    re.IGNORECASE,
)
# "Credentials: AWS-SAA-C03" names a certification: under a credentials key only a token
# counts, a run of letters and digits with no word breaks.
_CREDENTIALS_KEY = re.compile(r"creds?|credentials?", re.IGNORECASE)
_TOKEN = re.compile(r"(?=[^\d]*\d)(?=[\d_+/=]*[A-Za-z])[A-Za-z0-9_+/=]{16,}")
# Keywords that name nothing but a credential: after "=" or ":=" their value is refused
# whatever it looks like ("password=hunter"); "secret = sauce" is left to the shape rule.
_STRONG = re.compile(
    r"pass(?:word|wd|phrase|code)?|pwd|pw|passwort|kennwort|api[_ -]?key|client[_ -]?secret",
    re.IGNORECASE,
)
# "login: jdoe / Sunshine99", "Acceso al portal: jgarcia / X", "usuario: x / contraseña: y".
_PAIR = _Rule(
    r"(?<![\w-])(?:log[ -]?in|user(?:name)?|account|benutzer(?:name)?|konto|zugang(?:sdaten)?"
    r"|identifiant|utilisateur|compte|connexion|usuario|cuenta|acceso|cred(?:ential)?s"
    r"|identifiants|credenciales)(?![\w-])"
    r"[^\n/]{0,40}?[\s:=]\s*(?P<user>[\w.@+-]{2,64})\s*/\s*"
    rf"(?:(?:{_KEYWORDS})\s*[:=]?\s*)?(?P<value>[^\s/]{{4,}})",
)
_CURL = _Rule(
    r"\bcurl\b[^\n]*?\s(?:-u|--user)(?:\s+|=)[\"']?[^\s:\"']*:(?P<value>[^\s\"']+)",
)
_BASIC = re.compile(r"\bbasic\s+(?P<value>[A-Za-z0-9+/]{8,}={0,2})(?![\w+/=])", re.IGNORECASE)
_BEARER = _Rule(r"\bbearer\s+(?P<value>[A-Za-z0-9\-._~+/]{16,}=*)")
# scheme://user:password@host, any scheme (the scanner knows a fixed list) and an empty user.
_URI = _Rule(r"\b[a-z][a-z0-9+.\-]*://[^\s:/@]*:(?P<value>[^\s@/]+)@")
_PRIVATE_KEY = re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY( BLOCK)?-----(?:\s*[A-Za-z0-9+/=]+)*")
# An AWS key id alone: the scanner reports one only beside its secret.
_AWS_KEY_ID = re.compile(r"\b(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16}\b")
# A classic GitHub token split after its prefix ("ghp_ 1234…"), which no exact shape matches.
_SPLIT_GITHUB = re.compile(r"\bgh[pousr]_\s+[A-Za-z0-9]{36}\b")
# Model-provider keys in shapes the scanner's exact rules do not take (no marker infix).
_SK_KEY = re.compile(r"\bsk-(?:(?:proj|ant|svcacct|admin)-[A-Za-z0-9_\-]{20,}|[A-Za-z0-9]{32,})\b")
# A hex or base64 run is a credential only when a credential word stands just before it
# ("webhook secret da39…"); a commit SHA, a digest or an id with no such word is not.
_IN_CONTEXT = _Rule(
    r"(?<![\w-])(?:secret|token|password|passwort|api[ _-]?key|access[ _-]?key|secret[ _-]?key"
    r"|private[ _-]?key|webhook|credential|bearer|auth)s?(?![\w-])(?:\s+[\w-]+){0,2}?\s+"
    r"(?P<value>(?=[A-Za-z0-9+/_-]*\d)(?=[A-Za-z0-9+/_-]*[A-Za-z])[A-Za-z0-9+/_-]{20,}=*)",
)
# A value looks like a credential when it has a digit, a symbol or a lower-to-upper hump;
# "their secret is teamwork" and "secret: they prefer Go over Rust" are ordinary sentences.
_CREDENTIAL_SHAPE = re.compile(r"\d|[a-z][A-Z]|[^\w]")
_TRAILING_PUNCT = ".,;:!?)"
_SENTENCE_END = ".,;:)"
REDACTED = "[redacted"
# Job-search and meeting sites whose links carry ids and tracking in their query strings
# (?gh_jid=…&token=…, zoom's ?pwd=… passcode hash): an invitation or a posting, never a login.
_KNOWN_HOSTS = (
    "greenhouse.io", "lever.co", "myworkdayjobs.com", "workday.com", "ashbyhq.com",
    "smartrecruiters.com", "indeed.com", "linkedin.com", "glassdoor.com", "workable.com",
    "recruitee.com", "personio.de", "personio.com", "jobvite.com", "icims.com", "taleo.net",
    "bamboohr.com", "calendly.com", "zoom.us", "meet.google.com", "calendar.google.com",
    "teams.microsoft.com", "webex.com", "hackerrank.com", "codility.com",
)  # fmt: skip
_URL_BEFORE = re.compile(r"https?://(?P<host>[^/\s?#]+)[^\s]*[?&]$", re.IGNORECASE)
# A numeric passcode beside a meeting link or id is the invitation's, not a login.
_MEETING_LINE = re.compile(
    r"zoom\.us/|meet\.google\.com|teams\.microsoft\.com|webex\.com|meeting[ -]?(?:id|number)"
    r"|besprechungs-?id|id de (?:la )?r[eé]union",
    re.IGNORECASE,
)
_WEBHOOK = _Rule(
    r"https://(?:(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/\d+/[\w-]{60,}"
    r"|[\w-]+\.webhook\.office\.com/webhookb2/\S+|chat\.googleapis\.com/v1/spaces/\S+token=\S+)",
)
_MAILGUN = re.compile(r"\b(?:pub)?key-[a-f0-9]{32}\b")
SECRET_KEYWORD = "Secret Keyword"


def _redacted(value: str) -> bool:
    """A redaction marker, as written or as the screen masks it (credentials._MARKER)."""
    return value.startswith(REDACTED) or not value.strip("_\"'")


def _value(text: str, match: re.Match[str]) -> tuple[str, int, int]:
    """The value ``match`` found, as written in ``text`` (the match may be in its lower case)."""
    # "!" and "?" stay in the span: passwords end in them more often than sentences do here.
    start, end = match.span("value")
    value = text[start:end].rstrip(_SENTENCE_END)
    return value, start, start + len(value)


def _unquoted(value: str) -> str:
    # A URL-quoted word ("oubli%C3%A9") is judged as the word it spells, not by its escapes.
    return unquote(value) if "%" in value else value


def looks_like_credential(value: str) -> bool:
    value = _unquoted(value.rstrip(_TRAILING_PUNCT))
    return len(value) >= 4 and bool(_CREDENTIAL_SHAPE.search(value))


def _password_like(value: str) -> bool:
    """A bare word that reads as a password: letters and digits, or letters and symbols."""
    value = _unquoted(value)
    has_alpha = any(c.isalpha() for c in value)
    return has_alpha and (any(c.isdigit() for c in value) or bool(re.search(r"[^\w]", value)))


def _benign_here(text: str, match: re.Match[str], value: str) -> bool:
    """A query parameter of a job-search or meeting link, an id in any link's query, or a
    meeting's numeric passcode: what job-search notes quote without holding a login."""
    line_start = text.rfind("\n", 0, match.start()) + 1
    line_end = text.find("\n", match.start())
    line = text[line_start : line_end if line_end >= 0 else len(text)]
    url = _URL_BEFORE.search(text[line_start : match.start()])
    if url:
        host = url.group("host").lower().rsplit("@", 1)[-1].split(":")[0]
        if value.isdigit() or any(host == h or host.endswith("." + h) for h in _KNOWN_HOSTS):
            return True
    return value.isdigit() and bool(_MEETING_LINE.search(line))


_IDENTIFIER_HINT = _Rule(
    r"(?:pass|pwd|secret|token|api_?key|apikey|access_?key|private_?key|auth|cred)[\w.-]*"
    r"(?:[\"']?\s*(?:string\s*|str\s*)?[:=?.+,]|>|[\"']\s+value)",
)


def _assigned(text: str, lowered: str | None) -> Iterator[Span]:
    if _IDENTIFIER_HINT.search(text, lowered):
        yield from _identifiers(text, lowered)
    for match in _ASSIGNED.finditer(text, lowered):
        value, start, end = _value(text, match)
        if len(value) < 4 or _redacted(value) or _benign_here(text, match, value):
            continue
        code_like = match.group("op").strip() in {"=", ":="} and _STRONG.fullmatch(
            match.group("key")
        )
        if code_like or match.group("quote") or looks_like_credential(value):
            yield Span(SECRET_KEYWORD, start, end)
    for match in _ASSIGNED_WIDE.finditer(text, lowered):
        value, start, end = _value(text, match)
        # "my password manager of choice is 1Password": a product name, not a password.
        product = re.fullmatch(r"\d*[A-Z][a-z]+", value)
        if _password_like(value) and not product and not _redacted(value):
            yield Span(SECRET_KEYWORD, start, end)
    for match in _BARE.finditer(text, lowered):
        value, start, end = _value(text, match)
        if len(value) >= 6 and _password_like(value) and not _redacted(value):
            yield Span(SECRET_KEYWORD, start, end)


def _identifiers(text: str, lowered: str | None) -> Iterator[Span]:
    for match in _IDENTIFIER.finditer(text, lowered):
        value, start, end = _value(text, match)
        if text[match.start() - 1 : match.start()] in {"?", "&"}:  # a URL's query: one parameter
            value = value.split("&", 1)[0]
            end = start + len(value)
        # A quoted value under a quoted key is JSON, where every value is quoted.
        quoted = bool(match.group("quote")) and not match.group("keyquote")
        if _named_credential(text, match, match.group("key"), value, quoted=quoted):
            yield Span(SECRET_KEYWORD, start, end)
    if "<" in text or "value" in text:
        for match in _XML.finditer(text):
            group = "value" if match.group("value") else "attrvalue"
            value = match.group(group).rstrip(_SENTENCE_END)
            key = match.group("key") or match.group("attr")
            # Markup inside the element is read as nothing, as a browser shows it.
            if _named_credential(text, match, key, _TAGS.sub("", value), quoted=False):
                yield Span(SECRET_KEYWORD, match.start(group), match.start(group) + len(value))


def _named_credential(
    text: str, match: re.Match[str], key: str, value: str, *, quoted: bool
) -> bool:
    """Whether ``value``, named by the credential word in ``key``, is a credential."""
    if _redacted(value) or _benign_here(text, match, value) or len(value) < 8:
        return False
    if "author" in key.lower():  # "author: JaneDoe42" names a person, not an auth value
        return False
    if _CREDENTIALS_KEY.fullmatch(key.rsplit("_", 1)[-1]) and not _TOKEN.fullmatch(value):
        return False
    return bool(_CREDENTIAL_SHAPE.search(value)) or quoted


def _pairs(text: str, lowered: str | None) -> Iterator[Span]:
    for match in _PAIR.finditer(text, lowered):
        value, start, end = _value(text, match)
        if _password_like(value) and not _redacted(value):
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


def _any_of(*words: str) -> re.Pattern[str]:
    """One search for any of ``words`` in a lower-cased text: a regular expression of plain
    words scans once, where a substring test per word scans once per word."""
    return re.compile("|".join(map(re.escape, words)))


# Each rule runs only on text holding one of its trigger words (lowercased): most facts hold
# none, and a search for plain words costs far less than the rule's own scan.
_KEYWORD_TRIGGERS = _any_of(
    "passw", "passc", "passph", "pass:", "pass=", "pass ", "pw ", "pw:", "pw=", "pwd",
    "pin ", "pin:", "pin=", "pin-", "pin_", "pincode", "kennwort", "zugangscode", "mot de passe",
    "mdp", "code d'acc", "contrase", "clave", "secret", "api ", "api_", "api-", "apikey", "clé",
    "access", "auth_", "auth ", "auth-", "authtoken", "token", "cred",
)  # fmt: skip
_PAIR_TRIGGERS = _any_of(
    "log", "user", "account", "benutzer", "konto", "zugang", "identifiant", "utilisateur",
    "compte", "connexion", "usuario", "cuenta", "acceso", "cred",
)  # fmt: skip
_IN_CONTEXT_TRIGGERS = (
    "secret", "token", "passw", "api", "access", "private", "webhook", "credential", "bearer",
    "auth ", "auths ",
)  # fmt: skip
_SHAPES: list[tuple[str, "_Rule | re.Pattern[str]", re.Pattern[str]]] = [
    (kind, pattern, _any_of(*triggers))
    for kind, pattern, triggers in [
        ("Curl Credentials", _CURL, ("curl",)),
        ("Bearer Token", _BEARER, ("bearer",)),
        ("Connection String Password", _URI, ("://",)),
        ("Private Key", _PRIVATE_KEY, ("-----begin",)),
        ("AWS Access Key", _AWS_KEY_ID, ("akia", "asia", "abia", "acca", "a3t")),
        ("GitHub Token", _SPLIT_GITHUB, ("_ ",)),
        ("API Key", _SK_KEY, ("sk-",)),
        ("Webhook URL", _WEBHOOK, ("discord", "webhook", "googleapis")),
        ("Mailgun Key", _MAILGUN, ("key-",)),
        ("Token In Context", _IN_CONTEXT, _IN_CONTEXT_TRIGGERS),
    ]
]


def _ascii_lowered(text: str, lowered: str) -> str | None:
    """``lowered`` when the keyword rules may read it for ``text`` (an ASCII text)."""
    return lowered if text.isascii() else None


def find(text: str) -> list[Span]:
    """Every span karani's own rules flag in ``text`` (already folded to ASCII look-alikes)."""
    lowered = text.lower()
    fast = _ascii_lowered(text, lowered)
    spans: list[Span] = []
    if _KEYWORD_TRIGGERS.search(lowered):
        spans += _assigned(text, fast)
    if "/" in text and _PAIR_TRIGGERS.search(lowered):
        spans += _pairs(text, fast)
    if "basic" in lowered:
        spans += _basic_auth(text)
    for kind, rule, triggers in _SHAPES:
        if not triggers.search(lowered):
            continue
        if rule is _URI and "@" not in text:  # most links carry no user; this one needs it
            continue
        matches = rule.finditer(text, fast) if isinstance(rule, _Rule) else rule.finditer(text)
        for match in matches:
            if "value" not in match.re.groupindex:
                spans.append(Span(kind, match.start(), match.end()))
                continue
            start, end = match.span("value")
            value = text[start:end]
            # An id in context is still an id: "auth request 123e4567-e89b-…".
            uuid = kind == "Token In Context" and _UUID.fullmatch(value)
            if not _redacted(value) and not uuid:
                spans.append(Span(kind, start, end))
    return spans


def kinds() -> list[str]:
    """Every kind karani's own rules report."""
    return [SECRET_KEYWORD, "User Password Pair", "Basic Auth Credentials"] + [
        kind for kind, _, _ in _SHAPES
    ]
