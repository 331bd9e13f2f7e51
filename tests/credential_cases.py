"""The credential and ordinary-sentence cases the secrets specs and bench/secrets_bench.py share.

Plain data with no imports, so the bench reads them as ``tests.credential_cases`` and the
specs as ``credential_cases`` (pytest puts tests/ on sys.path).
"""

JWT = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0."
    "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
)

# (text, what the error must name)
CREDENTIALS = [
    ("my AWS key is AKIAIOSFODNN7EXAMPLE", "AWS Access Key"),
    ("aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "Secret Keyword"),
    ("push with ghp_1234567890abcdefghijABCDEFGHIJ123456", "github-pat"),
    (
        "github_pat_113DfrvlOnGr1QBR1NlVZ6_"
        "vK7peo4HmxB24qIXgxoAdqad7a5jMlcPlspCfZc5izXnQHoRPBmP79iIiII",
        "github-fine-grained-pat",
    ),
    ("OpenAI key sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCD", "API Key"),
    ("old style sk-abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJ", "API Key"),
    ("anthropic sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789", "API Key"),
    ("google maps AIzaSyA1234567890abcdefghijklmnopqrstuv", "gcp-api-key"),
    ("npm publish token npm_abcdefghijklmnopqrstuvwxyz0123456789", "npmjsaccesstoken"),
    ("slack bot xoxb-123456789012-1234567890123-abcdefghijklmnopqrstuvwx", "slack-bot-token"),
    (
        "webhook https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX",
        "slack-webhook-url",
    ),
    ("stripe sk_live_4eC39HqLyjWDarjtT1zdp7dc", "stripe-access-token"),
    ("gitlab glpat-abcdefghij0123456789", "gitlab-pat"),
    ("twilio SK0123456789abcdef0123456789abcdef", "twilio-api-key"),
    ("SG.abcdefghijklmnopqrstuv.abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQ", "sendgrid"),
    (
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\n-----END RSA PRIVATE KEY-----",
        "Private Key",
    ),
    ("-----BEGIN OPENSSH PRIVATE KEY-----", "Private Key"),
    ("-----BEGIN ENCRYPTED PRIVATE KEY-----", "Private Key"),
    ("password=hunter22", "Secret Keyword"),
    ("password: hunter22", "Secret Keyword"),
    ('PASSWORD="hunter22"', "Secret Keyword"),
    ("client_secret=abcdef123456", "Secret Keyword"),
    ("token=abcd1234efgh5678", "Secret Keyword"),
    ("passphrase: correct-horse-battery", "Secret Keyword"),
    ("my password is hunter22", "Secret Keyword"),
    ("My Password Is CorrectHorse", "Secret Keyword"),
    ("the password for the portal is Sunshine99.", "Secret Keyword"),
    ("the api key is 9f8e7d6c5b4a39281706", "Secret Keyword"),
    ("postgres://user:s3cretpw@db.example.com:5432/app", "Connection String Password"),
    ("postgresql://admin:pa55word@10.0.0.5/prod", "Connection String Password"),
    ("mysql://root:toor@localhost/db", "Connection String Password"),
    ("redis://:redispass@cache:6379/0", "Connection String Password"),
    ("mongodb+srv://app:M0ngoPass@cluster0.example.net/test", "Connection String Password"),
    ("login at https://bob:hunter22@example.com/path", "Connection String Password"),
    (f"session {JWT}", "jwt"),
    ("Authorization: Bearer abcdef0123456789abcdef0123456789", "Bearer Token"),
    # Prose phrasings detect-secrets misses (issue 14, item 7).
    ("the password was hunter22", "Secret Keyword"),
    ("my pw is hunter22", "Secret Keyword"),
    ("password := Hunter22!", "Secret Keyword"),
    ("password=hunter", "Secret Keyword"),
    ("Passwort ist Sommer2024", "Secret Keyword"),
    ("das Kennwort lautet Sommer-Wind", "Secret Keyword"),
    ("my bank PIN is 4821", "Secret Keyword"),
    ("the door passcode: 998877", "Secret Keyword"),
    ("ghp_ 1234567890abcdefghijABCDEFGHIJ123456", "GitHub Token"),
    ("webhook secret da39a3ee5e6b4b0d3255bfef95601890afd80709", "Token In Context"),
    # Issue 15, item 6: lowercase, one digit; decided in docs/security.md (refused).
    ("my password is hunter2", "Secret Keyword"),
]

# Look-alikes of the credentials above: fullwidth (NFKC), Cyrillic and Greek letters
# (Unicode's confusables).
DISGUISED = [
    ("\uff47\uff48\uff50_1234567890abcdefghijABCDEFGHIJ123456", "github-pat"),
    ("gh\u0440_1234567890abcdefghijABCDEFGHIJ123456", "github-pat"),
    ("\u0410KIAIOSFODNN7EXAMPLE", "AWS Access Key"),
    ("\u0440\u0430ssword=hunter22", "Secret Keyword"),
    ("my passw\u03bfrd is hunter22", "Secret Keyword"),
    ("\u0455k_live_4eC39HqLyjWDarjtT1zdp7dc", "stripe-access-token"),
]

ORDINARY = [
    "Built token bucket rate limiting for the API gateway",
    "The secret to their culture is written feedback",
    "Their secret is teamwork",
    "Interviewed with the password manager team at 1Password",
    "A password is required to view the job board",
    "The API key is rotated weekly, says their security lead",
    "The token is expired after a week of inactivity",
    "Asked about password reset flows in the system design round",
    "Salary range 120k-150k EUR plus 10% bonus",
    "Base salary $185,000, equity 0.1%, token allowance for conferences",
    "Offer: CHF 140000, start 2027-01-15",
    "Apply at https://jobs.example.com/roles/123?ref=linkedin",
    "Careers page: https://northwind.example/careers",
    "Their database is postgres://db.example.com/app, no credentials shared",
    "They use JWT for auth and rotate keys monthly",
    "Token economy startup, not interested in crypto",
    "The recruiter's email is jane.doe@example.com",
    "Met the API key management team; they build secrets rotation",
    "Stripe is hiring for the payments infrastructure team",
    "GitHub Actions and AWS experience required",
    "Office near 10.0.0.1 Main Street, Zürich",
    "Their bearer of bad news was the hiring manager",
    "Secret Santa at the Christmas party was fun",
    "scikit-learn (sk-learn) and pandas experience",
    "Prefers companies that do not share passwords on laptops",
    # Prose that names a credential word without carrying a credential (issue 15, item 6).
    "secret: they prefer Go over Rust",
    "password: required for the candidate portal",
    "The team's secret = sauce, they say",
    "Their pin is on the office map near the kitchen",
    "The secret is that they ship every Friday",
    "Mot de passe est oublié? They have SSO anyway",
    "Resume in Русский and Ελληνικά for the Athens role",
]
