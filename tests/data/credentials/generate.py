# ruff: noqa: E501  (a table of token shapes reads best one shape per line)
"""Writes the labelled credential sets beside this file, with fresh random bodies each run.

The shapes come from sources karani does not write: the providers' documented token formats
and the true-positive cases of gitleaks' rule tests (cmd/generate/config/rules/*.go) and
trufflehog's detector tests (pkg/detectors/*/..._test.go). Every body is drawn from
``secrets`` here, so no real credential is ever in the repository.

    python tests/data/credentials/generate.py   # rewrites providers/prose/benign .jsonl
"""

import base64
import json
import secrets
import string
import uuid
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
UPPER, LOWER, DIGITS = string.ascii_uppercase, string.ascii_lowercase, string.digits
ALNUM = UPPER + LOWER + DIGITS
HEX = "0123456789abcdef"
B32 = UPPER + "234567"
URLSAFE = ALNUM + "_-"
B64 = ALNUM + "+/"


def r(alphabet: str, n: int) -> str:
    return "".join(secrets.choice(alphabet) for _ in range(n))


def digits(n: int) -> str:
    return secrets.choice("123456789") + r(DIGITS, n - 1)


def jwt() -> str:
    def part(obj: dict) -> str:
        return base64.urlsafe_b64encode(json.dumps(obj).encode()).decode().rstrip("=")

    return f"{part({'alg': 'HS256', 'typ': 'JWT'})}.{part({'sub': digits(10)})}.{r(URLSAFE, 43)}"


def password() -> str:
    word = secrets.choice(
        ["Sunshine", "Bergwelt", "Soleil", "Primavera", "Harbor", "Falke", "Mariposa", "Orion"]
    )
    return f"{word}{digits(2)}{secrets.choice('!#$%&*?')}{r(LOWER, 2)}"


def basic(user: str) -> str:
    return base64.b64encode(f"{user}:{password()}".encode()).decode()


# (source, provider, sentence maker): each is one documented token shape in a sentence.
PROVIDERS: list[tuple[str, str, Callable[[], str]]] = [
    ("gitleaks", "github-pat", lambda: f"push with ghp_{r(ALNUM, 36)}"),
    ("gitleaks", "github-fine-grained-pat", lambda: f"token github_pat_{r(ALNUM + '_', 82)}"),
    ("gitleaks", "github-oauth", lambda: f"gho_{r(ALNUM, 36)}"),
    ("gitleaks", "github-app-token", lambda: f"GITHUB_TOKEN=ghs_{r(ALNUM, 36)}"),
    ("gitleaks", "github-refresh-token", lambda: f"refresh ghr_{r(ALNUM, 36)}"),
    ("gitleaks", "gitlab-pat", lambda: f"gitlab token glpat-{r(URLSAFE, 20)}"),
    ("gitleaks", "gitlab-runner", lambda: f"runner glrt-{r(URLSAFE, 20)}"),
    ("gitleaks", "aws-access-token", lambda: f"aws key AKIA{r(B32, 16)}"),
    (
        "gitleaks",
        "aws-secret",
        lambda: f"aws_access_key_id=AKIA{r(B32, 16)} aws_secret_access_key={r(B64, 40)}",
    ),
    ("gitleaks", "slack-bot-token", lambda: f"xoxb-{digits(12)}-{digits(13)}-{r(ALNUM, 24)}"),
    (
        "gitleaks",
        "slack-user-token",
        lambda: f"xoxp-{digits(12)}-{digits(12)}-{digits(13)}-{r(HEX, 32)}",
    ),
    (
        "gitleaks",
        "slack-webhook",
        lambda: (
            f"https://hooks.slack.com/services/T{r(UPPER + DIGITS, 10)}/B{r(UPPER + DIGITS, 10)}/{r(ALNUM, 24)}"
        ),
    ),
    ("gitleaks", "stripe-secret", lambda: f"stripe sk_live_{r(ALNUM, 99)}"),
    ("gitleaks", "stripe-restricted", lambda: f"rk_live_{r(ALNUM, 24)}"),
    (
        "gitleaks",
        "openai",
        lambda: f"OPENAI_API_KEY=sk-proj-{r(URLSAFE, 74)}T3BlbkFJ{r(URLSAFE, 74)}",
    ),
    ("gitleaks", "openai-legacy", lambda: f"sk-{r(ALNUM, 20)}T3BlbkFJ{r(ALNUM, 20)}"),
    ("gitleaks", "anthropic", lambda: f"sk-ant-api03-{r(URLSAFE, 93)}AA"),
    ("gitleaks", "anthropic-admin", lambda: f"sk-ant-admin01-{r(URLSAFE, 93)}AA"),
    ("gitleaks", "gcp-api-key", lambda: f"maps key AIza{r(URLSAFE, 35)}"),
    ("gitleaks", "npm", lambda: f"//registry.npmjs.org/:_authToken=npm_{r(LOWER + DIGITS, 36)}"),
    ("gitleaks", "pypi", lambda: f"pypi-AgEIcHlwaS5vcmc{r(URLSAFE, 70)}"),
    ("gitleaks", "sendgrid", lambda: f"SG.{r(URLSAFE, 22)}.{r(URLSAFE, 43)}"),
    ("gitleaks", "twilio", lambda: f"twilio SK{r(HEX, 32)}"),
    ("gitleaks", "huggingface", lambda: f"HF_TOKEN=hf_{r(UPPER + LOWER, 34)}"),
    ("gitleaks", "huggingface-org", lambda: f"api_org_{r(UPPER + LOWER, 34)}"),
    ("gitleaks", "atlassian", lambda: f"jira token ATATT3{r(URLSAFE, 183)}={r(HEX.upper(), 8)}"),
    ("gitleaks", "atlassian-keyword", lambda: f"atlassian_api_token = {r(LOWER + DIGITS, 24)}"),
    ("gitleaks", "facebook-page", lambda: f"fb EAAM{r(ALNUM, 120)}"),
    (
        "gitleaks",
        "facebook-access",
        lambda: f"facebook token {digits(15)}|{r(LOWER + DIGITS + '-_', 32)}",
    ),
    ("gitleaks", "facebook-secret", lambda: f"facebook_secret = {r(HEX, 32)}"),
    (
        "gitleaks",
        "azure-ad-client-secret",
        lambda: f'client_secret: "{r(ALNUM, 3)}{r(DIGITS, 1)}Q~{r(ALNUM + "_~.-", 34)}"',
    ),
    (
        "gitleaks",
        "1password-service-account",
        lambda: f"OP_SERVICE_ACCOUNT_TOKEN=ops_eyJ{r(B64, 260)}",
    ),
    (
        "gitleaks",
        "1password-secret-key",
        lambda: (
            f"A3-{r(UPPER + DIGITS, 6)}-{r(UPPER + DIGITS, 11)}-{r(UPPER + DIGITS, 5)}-{r(UPPER + DIGITS, 5)}-{r(UPPER + DIGITS, 5)}"
        ),
    ),
    ("gitleaks", "flyio-access", lambda: f"FLY_API_TOKEN=fo1_{r(URLSAFE, 43)}"),
    ("gitleaks", "flyio-macaroon", lambda: f"fly token FlyV1 fm2_{r(B64, 120)}"),
    ("gitleaks", "vault-service", lambda: f"VAULT_TOKEN=hvs.{r(URLSAFE, 90)}"),
    ("gitleaks", "vault-batch", lambda: f"hvb.{r(URLSAFE, 140)}"),
    ("gitleaks", "heroku-v2", lambda: f"HEROKU_API_KEY=HRKU-AA{r(URLSAFE, 58)}"),
    ("gitleaks", "heroku-legacy", lambda: f"heroku_api_key = {uuid.uuid4()}"),
    ("gitleaks", "notion", lambda: f"notion ntn_{digits(11)}{r(ALNUM, 35)}"),
    ("gitleaks", "linear", lambda: f"LINEAR_API_KEY=lin_api_{r(ALNUM, 40)}"),
    ("gitleaks", "airtable-pat", lambda: f"airtable pat{r(ALNUM, 14)}.{r(HEX, 64)}"),
    ("gitleaks", "airtable-legacy", lambda: f"airtable_api_key = key{r(ALNUM, 14)}"),
    (
        "gitleaks",
        "discord-webhook",
        lambda: f"https://discord.com/api/webhooks/{digits(18)}/{r(URLSAFE, 68)}",
    ),
    (
        "gitleaks",
        "discord-bot",
        lambda: f"discord_bot_token = {r(ALNUM, 24)}.{r(URLSAFE, 6)}.{r(URLSAFE, 38)}",
    ),
    ("gitleaks", "mailgun-private", lambda: f"mailgun_api_key = key-{r(HEX, 32)}"),
    ("gitleaks", "mailgun-pub", lambda: f"mailgun pubkey-{r(HEX, 32)}"),
    ("gitleaks", "mailchimp", lambda: f"mailchimp_api_key = {r(HEX, 32)}-us{digits(2)}"),
    ("gitleaks", "shopify", lambda: f"shopify shpat_{r(HEX, 32)}"),
    ("gitleaks", "digitalocean", lambda: f"DIGITALOCEAN_TOKEN=dop_v1_{r(HEX, 64)}"),
    ("gitleaks", "doppler", lambda: f"dp.pt.{r(LOWER + DIGITS, 43)}"),
    ("gitleaks", "databricks", lambda: f"databricks dapi{r(HEX, 32)}"),
    ("gitleaks", "postman", lambda: f"PMAK-{r(HEX, 24)}-{r(HEX, 34)}"),
    ("gitleaks", "grafana-sa", lambda: f"glsa_{r(ALNUM, 32)}_{r(HEX, 8)}"),
    ("gitleaks", "newrelic", lambda: f"NEW_RELIC_API_KEY=NRAK-{r(UPPER + DIGITS, 27)}"),
    ("gitleaks", "dynatrace", lambda: f"dt0c01.{r(UPPER + DIGITS, 24)}.{r(UPPER + DIGITS, 64)}"),
    (
        "gitleaks",
        "age",
        lambda: f"AGE-SECRET-KEY-1{r('QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L'.upper(), 58)}",
    ),
    ("gitleaks", "telegram", lambda: f"telegram_bot_token = {digits(10)}:AA{r(URLSAFE, 33)}"),
    ("gitleaks", "square", lambda: f"square EAAA{r(URLSAFE, 60)}"),
    ("gitleaks", "sentry", lambda: f"sentry token sntryu_{r(HEX, 64)}"),
    ("gitleaks", "jwt", lambda: f"session {jwt()}"),
    (
        "gitleaks",
        "private-key",
        lambda: f"-----BEGIN RSA PRIVATE KEY-----\n{r(B64, 64)}\n-----END RSA PRIVATE KEY-----",
    ),
    (
        "gitleaks",
        "private-key-openssh",
        lambda: f"-----BEGIN OPENSSH PRIVATE KEY-----\n{r(B64, 70)}",
    ),
    (
        "gitleaks",
        "private-key-pkcs8",
        lambda: f"-----BEGIN ENCRYPTED PRIVATE KEY-----\n{r(B64, 64)}",
    ),
    (
        "trufflehog",
        "uri-postgres",
        lambda: f"postgres://app:{password()}@db.{r(LOWER, 6)}.internal:5432/prod",
    ),
    ("trufflehog", "uri-mysql", lambda: f"mysql://root:{password()}@10.0.{digits(2)}.4/hr"),
    (
        "trufflehog",
        "uri-mongodb",
        lambda: f"mongodb+srv://svc:{r(ALNUM, 16)}@cluster0.{r(LOWER, 5)}.mongodb.net/app",
    ),
    ("trufflehog", "uri-redis", lambda: f"redis://:{r(ALNUM, 20)}@cache:6379/0"),
    (
        "trufflehog",
        "uri-amqp",
        lambda: f"amqp://guest:{r(ALNUM, 14)}@rabbit.{r(LOWER, 5)}.io:5672/",
    ),
    ("trufflehog", "uri-ftp", lambda: f"ftp://upload:{password()}@ftp.{r(LOWER, 6)}.com/cv"),
    (
        "trufflehog",
        "uri-https",
        lambda: f"https://jdoe:{password()}@git.{r(LOWER, 6)}.com/repo.git",
    ),
    ("trufflehog", "jdbc", lambda: f"jdbc:postgresql://db:5432/app?user=app&password={password()}"),
    ("trufflehog", "ado-net", lambda: f"Server=tcp:sql1,1433;User ID=sa;Password={password()};"),
    (
        "trufflehog",
        "curl-user",
        lambda: f"curl --user jdoe:{password()} https://api.{r(LOWER, 6)}.com/v1",
    ),
    (
        "trufflehog",
        "curl-u",
        lambda: f"curl -u 'admin:{password()}' https://{r(LOWER, 6)}.io/status",
    ),
    ("trufflehog", "basic-auth-header", lambda: f"Authorization: Basic {basic('jdoe')}"),
    ("trufflehog", "bearer-header", lambda: f"Authorization: Bearer {r(ALNUM, 40)}"),
    ("trufflehog", "generic-api-key", lambda: f'api_key = "{r(ALNUM, 32)}"'),
    ("trufflehog", "generic-secret", lambda: f"SECRET_KEY={r(ALNUM + '!@#%^&*', 40)}"),
    ("trufflehog", "generic-token", lambda: f"auth_token: {r(HEX, 40)}"),
    # Issue 43's held-out misses, as families: each provider in more than one setting.
    ("gitleaks", "stripe-test-secret", lambda: f"stripe test key sk_test_{r(ALNUM, 24)}"),
    ("gitleaks", "stripe-test-secret", lambda: f"STRIPE_API_KEY=sk_test_{r(ALNUM, 99)}"),
    ("gitleaks", "stripe-test-restricted", lambda: f'stripe.api_key = "rk_test_{r(ALNUM, 24)}"'),
    (
        "gitleaks",
        "azure-ad-client-secret-bare",
        lambda: f"{r(ALNUM, 3)}{digits(1)}Q~{r(ALNUM + '_.~-', 34)}",
    ),
    (
        "gitleaks",
        "azure-ad-client-secret-json",
        lambda: f'"clientSecret": "{r(ALNUM, 3)}{digits(1)}Q~{r(ALNUM + "_.~-", 31)}"',
    ),
    (
        "gitleaks",
        "sidekiq-secret",
        lambda: f"BUNDLE_ENTERPRISE__CONTRIBSYS__COM: {r(HEX, 8)}:{r(HEX, 8)}",
    ),
    (
        "gitleaks",
        "sidekiq-secret",
        lambda: f'export BUNDLE_GEMS__CONTRIBSYS__COM="{r(HEX, 8)}:{r(HEX, 8)}"',
    ),
    (
        "gitleaks",
        "sidekiq-sensitive-url",
        lambda: f"source 'https://{r(HEX, 8)}:{r(HEX, 8)}@enterprise.contribsys.com/'",
    ),
    (
        "gitleaks",
        "sourcegraph-access-token",
        lambda: f"sgp_{r(HEX + 'ABCDEF', 16)}_{r(HEX + 'ABCDEF', 40)}",
    ),
    ("gitleaks", "sourcegraph-access-token", lambda: f'SRC_ACCESS_TOKEN="sgp_local_{r(HEX, 40)}"'),
    ("gitleaks", "sourcegraph-access-token", lambda: f"sourcegraph token sgp_{r(HEX, 40)}"),
    ("gitleaks", "sumologic-access-id", lambda: f'SUMO_ACCESS_ID = "su{r(ALNUM, 12)}"'),
    ("gitleaks", "sumologic-access-id", lambda: f"the Sumo Logic access id is su{r(ALNUM, 12)}"),
    ("gitleaks", "sumologic-access-token", lambda: f"SUMOLOGIC_ACCESSKEY: {r(ALNUM, 64)}"),
    ("trufflehog", "client-secret-hex", lambda: f'"client_secret": "{r(HEX, 32)}"'),
    ("trufflehog", "client-secret-hex", lambda: f"oauth:\n  client_secret: {r(HEX, 40)}"),
    ("trufflehog", "credentials-hex", lambda: f"credentials: {r(HEX, 40)}"),
    ("trufflehog", "credentials-hex", lambda: f'{{"credentials": "{r(HEX, 64)}"}}'),
    ("gitleaks", "sidekiq-prose", lambda: f"Sidekiq Enterprise login is {r(HEX, 8)}:{r(HEX, 8)}"),
    # A credential-named identifier in the syntaxes of code and configuration files.
    ("gitleaks", "generic-xml-element", lambda: f"<deployToken>\n  {r(ALNUM, 32)}\n</deployToken>"),
    (
        "gitleaks",
        "generic-xml-entry",
        lambda: f'<entry name="smtpPassword" value="{r(ALNUM, 20)}" />',
    ),
    ("gitleaks", "generic-go-var", lambda: f'var apiToken string = "{r(ALNUM, 32)}"'),
    ("gitleaks", "generic-php-concat", lambda: f'$serviceSecret .= "{r(HEX, 40)}"'),
    ("gitleaks", "generic-make-assign", lambda: f'DEPLOY_TOKEN ?= "{r(ALNUM, 32)}"'),
    (
        "gitleaks",
        "generic-set-property",
        lambda: f'System.setProperty("APP_SECRET", "{r(ALNUM, 32)}")',
    ),
]

# Credentials written into job-search notes, in four languages: {pw} is a fresh password,
# {user} a login name, {key} a provider key.
PROSE = [
    ("en", "The password for the Greenhouse candidate portal is {pw}"),
    ("en", "Recruiter sent my login: {user} / {pw}"),
    ("en", "Workday account for Initech: {user}@gmail.com / {pw}"),
    ("en", "my pw for the Lever portal is {pw}"),
    ("en", "Take-home repo access: username {user}, password {pw}"),
    ("en", "The coding test site wants the passcode {pw} at login"),
    ("en", "To test their API run curl --user {user}:{pw} https://api.example-ats.com/v2/me"),
    ("en", "Their staging needs the header Authorization: Basic {basic}"),
    ("en", "The take-home's README left their Stripe key in it: {key}"),
    ("en", "Use the database at postgres://candidate:{pw}@takehome.db.internal/app for the task"),
    ("de", "Das Passwort für das Bewerberportal ist {pw}"),
    ("de", "Mein Kennwort für Workday lautet {pw}"),
    ("de", "Zugangsdaten fürs Portal: Benutzer {user}, Passwort {pw}"),
    ("de", "Login für die Coding-Challenge: {user} / {pw}"),
    ("de", "Das Passwort zum Testaccount der Firma war {pw}"),
    ("de", "Der API-Schlüssel für die Aufgabe ist {key}"),
    ("de", "Benutzername: {user}, Kennwort: {pw}"),
    ("fr", "le mot de passe du portail est {pw}"),
    ("fr", "Mon mot de passe pour le portail candidat : {pw}"),
    ("fr", "identifiant : {user} / mot de passe : {pw}"),
    ("fr", "Le mot de passe de mon compte Workday était {pw}"),
    ("fr", "La clé API pour l'exercice est {key}"),
    ("fr", "Connexion au portail RH : {user} / {pw}"),
    ("es", "la contraseña del portal es {pw}"),
    ("es", "Mi contraseña para el portal de empleo es {pw}"),
    ("es", "usuario: {user} / contraseña: {pw}"),
    ("es", "La contraseña de mi cuenta en Workday: {pw}"),
    ("es", "La clave de la prueba técnica es {pw}"),
    ("es", "La clave API del ejercicio es {key}"),
    ("es", "Acceso al portal: {user} / {pw}"),
]

KEYS: list[Callable[[], str]] = [
    lambda: f"sk_live_{r(ALNUM, 24)}",
    lambda: f"ghp_{r(ALNUM, 36)}",
    lambda: f"AKIA{r(B32, 16)}",
    lambda: f"hf_{r(UPPER + LOWER, 34)}",
    lambda: f"sk_test_{r(ALNUM, 24)}",
    lambda: f"sgp_{r(HEX, 40)}",
]


def sha() -> str:
    return r(HEX, 40)


# Ordinary job-search lines with ids, hashes and links: none may be refused.
BENIGN: list[Callable[[], str]] = [
    lambda: f"Their take-home repo is at commit {sha()}",
    lambda: f"Reviewed PR #412, merged as {sha()} into main",
    lambda: f"git checkout {sha()[:12]} before the pairing session",
    lambda: f"Docker image ghcr.io/initech/api@sha256:{r(HEX, 64)}",
    lambda: f"The artifact's digest is sha256:{r(HEX, 64)}",
    lambda: f"The installer checksum (SHA-256) was {r(HEX, 64)}",
    lambda: f"Application id {uuid.uuid4()} at Globex",
    lambda: f"Support ticket request id {uuid.uuid4()} about the portal",
    lambda: f"Request-Id: req_{r(ALNUM, 24)} when the upload failed",
    lambda: f"Job ID JR-{digits(6)}, Senior Backend Engineer, Berlin",
    lambda: f"Requisition R{digits(7)} closes on Friday",
    lambda: (
        f"Applied via https://boards.greenhouse.io/initech/jobs/{digits(7)}?gh_src={r(HEX, 10)}&gh_jid={digits(7)}"
    ),
    lambda: (
        f"Greenhouse link https://job-boards.greenhouse.io/globex/jobs/{digits(10)}?gh_jid={digits(10)}&utm_source=LinkedIn"
    ),
    lambda: (
        f"https://jobs.lever.co/acme/{uuid.uuid4()}/apply?lever-origin=applied&lever-source%5B%5D=LinkedIn"
    ),
    lambda: (
        f"https://initech.wd5.myworkdayjobs.com/en-US/External/job/Berlin/Staff-Engineer_R-{digits(5)}?source=LinkedIn"
    ),
    lambda: (
        f"Book a slot: https://calendly.com/jane-recruiter/30min?month=2026-12&utm_campaign={r(LOWER + DIGITS, 12)}"
    ),
    lambda: f"Interview on https://us02web.zoom.us/j/{digits(11)}?pwd={r(ALNUM, 32)}.1",
    lambda: f"Zoom meeting ID: {digits(3)} {digits(4)} {digits(4)}",
    lambda: f"Panel at https://meet.google.com/{r(LOWER, 3)}-{r(LOWER, 4)}-{r(LOWER, 3)}",
    lambda: (
        f"Teams call https://teams.microsoft.com/l/meetup-join/19%3ameeting_{r(ALNUM, 40)}%40thread.v2/0?context=%7b%22Tid%22%3a%22{uuid.uuid4()}%22%7d"
    ),
    lambda: (
        f"https://www.linkedin.com/jobs/view/{digits(10)}/?refId={r(B64, 22)}%3D%3D&trackingId={r(B64, 22)}%3D%3D"
    ),
    lambda: (
        f"Ashby posting https://jobs.ashbyhq.com/initech/{uuid.uuid4()}?utm_source={r(ALNUM, 10)}"
    ),
    lambda: f"SmartRecruiters ref {r(HEX, 24)} for the data role",
    lambda: f"Their CI run {digits(10)} failed on commit {sha()[:7]}",
    lambda: f"Offer letter envelope id {uuid.uuid4()} via DocuSign",
    lambda: f"Tracking number 1Z{r(UPPER + DIGITS, 16)} for the laptop",
    lambda: f"Coding challenge on HackerRank, test id {digits(6)}, invite {r(HEX, 16)}",
    lambda: "They asked about password hashing with bcrypt and argon2",
    lambda: "The recruiter said the portal password rules need 12 characters",
    lambda: "Das Passwort-Reset im Bewerberportal hat nicht funktioniert",
    lambda: "Le mot de passe oublié ne marche pas sur leur portail",
    lambda: "La contraseña del portal caduca cada 90 días, dicen",
    lambda: "Login with SSO via Okta / Google Workspace only",
    lambda: f"Salary band L5: 145k-170k EUR, ref {r(UPPER, 3)}-{digits(4)}",
    lambda: (
        f"The Figma file https://www.figma.com/file/{r(ALNUM, 22)}/Design-Exercise?node-id=0%3A1"
    ),
    lambda: f"Notion page https://www.notion.so/initech/Onboarding-{r(HEX, 32)}",
    lambda: f"Google Doc https://docs.google.com/document/d/{r(URLSAFE, 44)}/edit?usp=sharing",
    lambda: f"Loom recording https://www.loom.com/share/{r(HEX, 32)}",
    lambda: f"Git tag v2.3.1 ({sha()}) has the take-home solution",
    lambda: f"Their status page incident {r(LOWER + DIGITS, 12)} explained the outage",
    lambda: f"Interview feedback form https://forms.gle/{r(ALNUM, 17)}",
    lambda: f"Webex meeting number {digits(4)} {digits(3)} {digits(4)}",
    lambda: f"Recruiter's calendar invite UID {uuid.uuid4()}@google.com",
    lambda: f"Candidate number {digits(8)} on the Personio portal",
    lambda: f"Object key uploads/cv-{uuid.uuid4().hex}.pdf in their bucket",
    lambda: f"Build hash {r(HEX, 32)} is on staging, the recruiter said",
    lambda: "Initech just closed its Series C, 80M led by Sequoia",
    lambda: "Credentials: AWS-SAA-C03, CKA and the AZ-204 Azure developer exam",
    lambda: f"The Stripe test card is 4242 4242 4242 4242; payment intent pi_{r(ALNUM, 24)}",
    lambda: f"Their Sourcegraph search for repo:initech/api found commit {sha()}",
    lambda: f"Sumo Logic dashboard https://service.sumologic.com/ui/#/dashboard/{r(ALNUM, 16)}",
    lambda: f"client_id: {uuid.uuid4()} is the app registration they showed",
    lambda: (
        f"https://jobs.ashbyhq.com/initech/{uuid.uuid4()}/application?utm_source={r(ALNUM, 10)}"
    ),
    lambda: (
        f"https://initech.wd1.myworkdayjobs.com/Careers/job/Remote/Engineer_JR{digits(6)}-1?q=backend"
    ),
    lambda: f"Lever https://jobs.lever.co/globex/{uuid.uuid4()}?lever-source=Glassdoor",
    lambda: f"author: JaneDoe{digits(2)} wrote the engineering blog post",
    lambda: f"<author>Jane Doe {digits(4)}</author><title>Staff SRE</title>",
    lambda: f'<entry name="jobId" value="JR-{digits(6)}" />',
]


def main() -> None:
    def write(name: str, rows: list[dict]) -> None:
        with (HERE / name).open("w", encoding="utf-8") as out:
            for row in rows:
                out.write(json.dumps(row, ensure_ascii=False) + "\n")

    providers = [
        {"source": src, "kind": kind, "label": "credential", "text": make()}
        for src, kind, make in PROVIDERS
        for _ in range(2)
    ]
    prose = []
    for lang, template in PROSE:
        for _ in range(2):
            user = secrets.choice(["jdoe", "max.muster", "jdupont", "jgarcia", "a.smith"])
            text = template.format(
                pw=password(), user=user, key=secrets.choice(KEYS)(), basic=basic(user)
            )
            prose.append(
                {"source": "karani-prose", "kind": lang, "label": "credential", "text": text}
            )
    benign = [
        {"source": "karani-benign", "kind": "benign", "label": "benign", "text": make()}
        for make in BENIGN
        for _ in range(2)
    ]
    write("providers.jsonl", providers)
    write("prose.jsonl", prose)
    write("benign.jsonl", benign)


if __name__ == "__main__":
    main()
