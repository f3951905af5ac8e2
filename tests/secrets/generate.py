"""Writes corpus.json: realistic, fake secrets of every format the scanner must catch,
each inside the kind of text an agent would see it in, and clean texts it must leave
alone. Deterministic (seeded), so the corpus only changes when this file does.

    python3 tests/secrets/generate.py > tests/secrets/corpus.json
"""
import base64
import json
import random
import string

rng = random.Random(20261202)
ALNUM = string.ascii_letters + string.digits
HEX = "0123456789abcdef"
UPPER_NUM = string.ascii_uppercase + string.digits
B64 = ALNUM + "+/"
URLSAFE = ALNUM + "_-"


def r(n, alphabet=ALNUM):
    return "".join(rng.choice(alphabet) for _ in range(n))


def b64url(data):
    return base64.urlsafe_b64encode(json.dumps(data).encode()).decode().rstrip("=")


jwt = "%s.%s.%s" % (
    b64url({"alg": "HS256", "typ": "JWT"}),
    b64url({"sub": "1234567890", "name": "deploy-bot", "iat": 1733000000}),
    r(43, URLSAFE),
)
basic = base64.b64encode(b"deploy:%s" % r(14).encode()).decode()
pem_body = "\n".join(r(64, B64) for _ in range(4))

# (format, secret, text with {s} where the secret goes)
CASES = [
    ("rsa_private_key", "-----BEGIN RSA PRIVATE KEY-----\n%s\n-----END RSA PRIVATE KEY-----" % pem_body, "key for the staging box:\n{s}\nuse it with ssh -i"),
    ("openssh_private_key", "-----BEGIN OPENSSH PRIVATE KEY-----\n%s\n-----END OPENSSH PRIVATE KEY-----" % pem_body, "cat ~/.ssh/id_ed25519 printed {s}"),
    ("pgp_private_key", "-----BEGIN PGP PRIVATE KEY BLOCK-----\n%s\n-----END PGP PRIVATE KEY BLOCK-----" % pem_body, "the signing key:\n{s}"),
    ("age_secret_key", "AGE-SECRET-KEY-1" + r(58, UPPER_NUM), "# created: 2026-11-30\n{s}"),
    ("anthropic_key", "sk-ant-api03-" + r(93, URLSAFE) + "AA", "export ANTHROPIC_API_KEY={s}"),
    ("openai_key", "sk-" + r(48), "client = OpenAI(api_key=\"{s}\")"),
    ("openai_project_key", "sk-proj-" + r(64, URLSAFE), "OPENAI_API_KEY={s} in .env.local"),
    ("openrouter_key", "sk-or-v1-" + r(64, HEX), "router key {s} works"),
    ("huggingface_token", "hf_" + r(34), "huggingface-cli login --token {s}"),
    ("groq_key", "gsk_" + r(52), "GROQ_API_KEY=\"{s}\""),
    ("replicate_token", "r8_" + r(37), "REPLICATE_API_TOKEN={s} pytest"),
    ("perplexity_key", "pplx-" + r(48), "pplx key {s}"),
    ("xai_key", "xai-" + r(80), "XAI_API_KEY={s}"),
    ("tavily_key", "tvly-" + r(32), "search with {s}"),
    ("langsmith_key", "lsv2_pt_" + r(32, HEX) + "_" + r(10, HEX), "LANGCHAIN_API_KEY={s}"),
    ("pinecone_key", "pcsk_" + r(6) + "_" + r(60, ALNUM + "_"), "pc = Pinecone(\"{s}\")"),
    ("github_pat_classic", "ghp_" + r(36), "git clone https://github.com/acme/app using token {s}"),
    ("github_pat_fine", "github_pat_" + r(22) + "_" + r(59), "GH_TOKEN={s} gh pr list"),
    ("github_oauth", "gho_" + r(36), "the oauth token {s} expired"),
    ("github_app_token", "ghs_" + r(36), "Authorization header had {s}"),
    ("gitlab_pat", "glpat-" + r(20, URLSAFE), "CI_JOB_TOKEN fallback {s}"),
    ("npm_token", "npm_" + r(36), "NODE_AUTH_TOKEN is {s}"),
    ("npmrc_auth_token", r(36, URLSAFE), "//registry.npmjs.org/:_authToken={s}"),
    ("pypi_token", "pypi-AgEIcHlwaS5vcmc" + r(70, URLSAFE), "twine upload -p {s} dist/*"),
    ("buildkite_token", "bkua_" + r(40, HEX), "buildkite agent token {s}"),
    ("postman_key", "PMAK-" + r(24, HEX) + "-" + r(34, HEX), "postman {s}"),
    ("aws_access_key", "AKIA" + r(16, UPPER_NUM), "aws configure set aws_access_key_id {s}"),
    ("aws_secret_key", r(40, B64), "aws_secret_access_key = {s}"),
    ("aws_session_token", r(120, B64), "AWS_SESSION_TOKEN={s}"),
    ("google_api_key", "AIza" + r(35, URLSAFE), "maps?key={s}&libraries=places"),
    ("google_oauth_secret", "GOCSPX-" + r(28, URLSAFE), "client_secret.json had {s}"),
    ("google_oauth_token", "ya29." + r(120, URLSAFE), "gcloud token {s}"),
    ("azure_storage_key", r(86, B64) + "==", "DefaultEndpointsProtocol=https;AccountName=acme;AccountKey={s};EndpointSuffix=core.windows.net"),
    ("azure_service_bus_key", r(43, B64) + "=", "Endpoint=sb://acme.servicebus.windows.net/;SharedAccessKeyName=Root;SharedAccessKey={s}"),
    ("azure_sas_signature", r(43, ALNUM) + "%3D", "https://acme.blob.core.windows.net/c/f.txt?sv=2022-11-02&se=2026-12-31&sig={s}"),
    ("digitalocean_token", "dop_v1_" + r(64, HEX), "doctl auth init -t {s}"),
    ("alibaba_access_key", "LTAI" + r(20), "aliyun key id {s}"),
    ("tencent_secret_id", "AKID" + r(32), "tencent SecretId {s}"),
    ("vault_token", "hvs." + r(90, URLSAFE), "VAULT_TOKEN={s} vault kv get"),
    ("terraform_token", r(14) + ".atlasv1." + r(67, URLSAFE), "credentials app.terraform.io token {s}"),
    ("pulumi_token", "pul-" + r(40, HEX), "PULUMI_ACCESS_TOKEN={s}"),
    ("flyio_token", "fo1_" + r(43, URLSAFE), "fly deploy with {s}"),
    ("supabase_token", "sbp_" + r(40, HEX), "supabase login --token {s}"),
    ("databricks_token", "dapi" + r(32, HEX), "DATABRICKS_TOKEN={s}"),
    ("heroku_key", "HRKU-" + r(60, URLSAFE), "heroku token {s}"),
    ("cloudflare_api_token", r(40, URLSAFE), "CLOUDFLARE_API_TOKEN={s} wrangler deploy"),
    ("stripe_secret_key", "sk_live_" + r(99), "Stripe.api_key = \"{s}\""),
    ("stripe_restricted_key", "rk_test_" + r(99), "use {s} for the reports job"),
    ("stripe_webhook_secret", "whsec_" + r(32), "endpoint secret {s}"),
    ("square_token", "EAAA" + r(60, URLSAFE), "square access {s}"),
    ("shopify_token", "shpat_" + r(32, HEX), "X-Shopify-Access-Token: {s}"),
    ("sendgrid_key", "SG." + r(22, URLSAFE) + "." + r(43, URLSAFE), "SENDGRID_API_KEY={s}"),
    ("mailgun_key", "key-" + r(32, HEX), "mailgun api {s}"),
    ("mailchimp_key", r(32, HEX) + "-us14", "mailchimp {s}"),
    ("twilio_api_key", "SK" + r(32, HEX), "twilio key sid {s}"),
    ("slack_bot_token", "xoxb-" + r(12, string.digits) + "-" + r(13, string.digits) + "-" + r(24), "SLACK_BOT_TOKEN={s}"),
    ("slack_webhook", "https://hooks.slack.com/services/T" + r(10, UPPER_NUM) + "/B" + r(10, UPPER_NUM) + "/" + r(24), "curl -X POST {s} -d '{{\"text\":\"done\"}}'"),
    ("discord_webhook", "https://discord.com/api/webhooks/" + r(19, string.digits) + "/" + r(68, URLSAFE), "notify {s}"),
    ("telegram_bot_token", r(10, string.digits) + ":AA" + r(33, URLSAFE), "bot token {s}"),
    ("facebook_token", "EAAG" + r(150), "graph api access_token {s}"),
    ("atlassian_token", "ATATT3" + r(180, URLSAFE) + "=" + r(8, HEX), "JIRA_API_TOKEN={s}"),
    ("linear_key", "lin_api_" + r(40), "linear {s}"),
    ("doppler_token", "dp.pt." + r(43), "DOPPLER_TOKEN={s}"),
    ("figma_token", "figd_" + r(40, URLSAFE), "figma token {s}"),
    ("notion_token", "ntn_" + r(46), "NOTION_TOKEN={s}"),
    ("grafana_service_token", "glsa_" + r(32) + "_" + r(8, HEX), "grafana {s}"),
    ("sentry_token", "sntrys_" + r(120, ALNUM), "SENTRY_AUTH_TOKEN={s}"),
    ("newrelic_key", "NRAK-" + r(27, UPPER_NUM), "new relic {s}"),
    ("dynatrace_token", "dt0c01." + r(24, UPPER_NUM) + "." + r(64, UPPER_NUM), "dynatrace {s}"),
    ("mapbox_secret_token", "sk.eyJ1IjoiYWNtZSIsImEiOiJ" + r(40, URLSAFE) + "." + r(22, URLSAFE), "mapbox {s}"),
    ("jwt", jwt, "the session cookie was {s}"),
    ("bearer_token", r(40, URLSAFE), "curl -H 'Authorization: Bearer {s}' https://api.acme.dev"),
    ("basic_auth", basic, "Authorization: Basic {s}"),
    ("postgres_url_password", r(16), "DATABASE_URL=postgres://app:{s}@db.internal:5432/app"),
    ("mysql_url_password", r(12), "mysql://root:{s}@127.0.0.1/shop"),
    ("redis_url_password", r(20), "REDIS_URL=redis://:{s}@cache:6379/0"),
    ("mongodb_url_password", r(18), "mongodb+srv://admin:{s}@cluster0.abcde.mongodb.net/test"),
    ("amqp_url_password", r(14), "amqp://guest:{s}@rabbit:5672"),
    ("db_password_env", r(14), "DB_PASSWORD={s}"),
    ("postgres_password_env", r(12), "POSTGRES_PASSWORD: \"{s}\""),
    ("yaml_password", r(16), "database:\n  user: app\n  password: {s}\n"),
    ("json_password", r(16), "{{\"username\": \"app\", \"password\": \"{s}\"}}"),
    ("connection_string_password", r(14), "Server=tcp:acme.database.windows.net;User ID=app;Password={s};Encrypt=True"),
    ("curl_user_password", r(14), "curl -u admin:{s} https://ci.acme.dev/api/json"),
    ("mysql_cli_password", r(12), "mysql -u root -p{s} shop < dump.sql"),
    ("cli_password_flag", r(14), "psql --password {s} -h db"),
    ("secret_key_base", r(128, HEX), "SECRET_KEY_BASE={s}"),
    ("django_secret_key", r(50, ALNUM + "!@#%^&*(-_=+)"), "SECRET_KEY = '{s}'"),
    ("hex_api_key", r(64, HEX), "API_KEY={s}"),
    ("api_key_header", r(32), "X-Api-Key: {s}"),
    ("client_secret", r(40, URLSAFE), "client_secret: {s}"),
    ("encryption_key", r(44, B64), "ENCRYPTION_KEY=\"{s}\""),
    ("webhook_secret", r(32, HEX), "GITHUB_WEBHOOK_SECRET={s}"),
    ("prose_token", r(32), "the deploy token is {s} for now"),
    ("prose_password", "Tr0ub4dor&3x", "the admin password is {s} until rotation"),
]

CLEAN = [
    "The password reset flow lives in src/auth/reset.rs",
    "fn risk_score(task: &Task) -> f64 { 0.5 }",
    "use the skeleton-loader; see sk-lite docs",
    "password: str = Field(..., min_length=8)",
    "const token = await getToken(request);",
    "max_tokens = 4096",
    "git checkout 9fceb02d0ae598e95dc970b74767f19372d61af8",
    "sort_key = \"created_at\"",
    "The author field is optional",
    "PASSWORD_MIN_LENGTH=12",
    "if password == confirm: return True",
    "api_key = os.environ[\"OPENAI_API_KEY\"]",
    "password = request.form['password']",
    "token_type = \"bearer\"",
    "cargo build --release -p engram-cli",
    "[REDACTED:password] stays as it is",
    "see https://docs.rs/regex/latest/regex/struct.RegexSet.html",
    "sha256: e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
]

cases = []
for name, secret, text in CASES:
    assert "{s}" in text, name
    cases.append({"name": name, "secret": secret, "text": text.replace("{{", "{").replace("}}", "}").replace("{s}", secret)})
names = [c["name"] for c in cases]
assert len(set(names)) == len(names)
print(json.dumps({"cases": cases, "clean": CLEAN}, indent=1))
