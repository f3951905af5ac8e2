//! The scanner's rules: one pattern per known secret format, then the generic rules that
//! find a secret by the name it is assigned to.
//!
//! A rule's pattern may name two groups: `s`, the span to redact (the whole match when
//! absent), and `n`, the name the value is assigned to, which [`Check::Named`] classifies.
//! Specific formats come first: when findings overlap, the earlier rule names the kind.

/// What a match must also pass to count as a secret.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Check {
    /// The pattern is precise enough on its own.
    None,
    /// The value must be a plausible password, not a type, a variable or a path.
    Password,
    /// The value must look random (mixed characters, high entropy).
    Random,
    /// The `n` group must be a key-like name; its family decides the value's check.
    Named,
}

/// One kind of secret and how to find it.
#[derive(Debug, Clone, Copy)]
pub(super) struct Rule {
    /// The kind reported in findings and in `[REDACTED:<kind>]`.
    pub kind: &'static str,
    /// The pattern (Rust `regex` syntax).
    pub pattern: &'static str,
    /// What a match must also pass.
    pub check: Check,
}

const fn rule(kind: &'static str, pattern: &'static str) -> Rule {
    Rule {
        kind,
        pattern,
        check: Check::None,
    }
}

const fn checked(kind: &'static str, pattern: &'static str, check: Check) -> Rule {
    Rule {
        kind,
        pattern,
        check,
    }
}

/// Every rule, specific formats first.
pub(super) const RULES: &[Rule] = &[
    // Key material.
    rule(
        "private_key",
        r"(?s)-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----.*?(?:-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\z)",
    ),
    rule("age_secret_key", r"\bAGE-SECRET-KEY-1[0-9A-Z]{58}\b"),
    // Model providers.
    rule("anthropic_key", r"\bsk-ant-[A-Za-z0-9_\-]{20,}"),
    rule(
        "openai_key",
        r"\bsk-(?:proj-|svcacct-|admin-|or-v1-)?[A-Za-z0-9_\-]{20,}",
    ),
    rule("huggingface_token", r"\bhf_[A-Za-z0-9]{30,}\b"),
    rule("groq_key", r"\bgsk_[A-Za-z0-9]{40,}\b"),
    rule("replicate_token", r"\br8_[A-Za-z0-9]{30,}\b"),
    rule("perplexity_key", r"\bpplx-[A-Za-z0-9]{40,}\b"),
    rule("xai_key", r"\bxai-[A-Za-z0-9]{60,}\b"),
    rule("tavily_key", r"\btvly-(?:dev-|prod-)?[A-Za-z0-9]{28,}\b"),
    rule(
        "langsmith_key",
        r"\blsv2_(?:pt|sk)_[0-9a-f]{32}_[0-9a-f]{10}\b",
    ),
    rule("pinecone_key", r"\bpcsk_[A-Za-z0-9_]{40,}"),
    // Code hosts and registries.
    rule(
        "github_token",
        r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,})",
    ),
    rule(
        "gitlab_token",
        r"\b(?:glpat|gldt|glptt|glrt|glcbt|glft|glsoat)-[A-Za-z0-9_\-]{20,}",
    ),
    rule("npm_token", r"\bnpm_[A-Za-z0-9]{36}\b"),
    rule(
        "npmrc_auth",
        r"(?m)(?:^|[\s/:])(?:_authToken|_auth|_password)\s*=\s*[\x22']?(?P<s>[^\s\x22']{6,})",
    ),
    rule("pypi_token", r"\bpypi-AgE[A-Za-z0-9_\-]{50,}"),
    rule("buildkite_token", r"\bbkua_[0-9a-f]{40}\b"),
    rule("postman_key", r"\bPMAK-[0-9a-f]{24}-[0-9a-f]{34}\b"),
    // Clouds.
    rule(
        "aws_access_key",
        r"\b(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|ANPA|ANVA|APKA)[0-9A-Z]{16}\b",
    ),
    rule("google_api_key", r"\bAIza[0-9A-Za-z_\-]{35}"),
    rule("google_oauth_secret", r"\bGOCSPX-[A-Za-z0-9_\-]{24,}"),
    rule("google_oauth_token", r"\bya29\.[0-9A-Za-z_\-]{20,}"),
    rule(
        "azure_storage_key",
        r"(?i)\b(?:AccountKey|SharedAccessKey)\s*=\s*(?P<s>[A-Za-z0-9+/=]{20,})",
    ),
    rule(
        "azure_sas_signature",
        r"[?&]sig=(?P<s>[A-Za-z0-9%+/=]{20,})",
    ),
    rule("digitalocean_token", r"\bdo[opr]_v1_[0-9a-f]{64}\b"),
    rule("alibaba_access_key", r"\bLTAI[A-Za-z0-9]{20}\b"),
    rule("tencent_secret_id", r"\bAKID[A-Za-z0-9]{32}\b"),
    rule("hashicorp_vault_token", r"\bhv[sbr]\.[A-Za-z0-9_\-]{24,}"),
    rule(
        "terraform_cloud_token",
        r"\b[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=\-]{60,}",
    ),
    rule("pulumi_token", r"\bpul-[0-9a-f]{40}\b"),
    rule(
        "flyio_token",
        r"\b(?:fo1_[A-Za-z0-9_\-]{40,}|fm2_[A-Za-z0-9+/=_\-]{40,})",
    ),
    rule("supabase_token", r"\bsbp_[0-9a-f]{40}\b"),
    rule("databricks_token", r"\bdapi[0-9a-f]{32}(?:-\d)?\b"),
    rule("heroku_key", r"\bHRKU-[A-Za-z0-9_\-]{40,}"),
    rule(
        "cloudflare_origin_ca_key",
        r"\bv1\.0-[0-9a-f]{24}-[0-9a-f]{146}\b",
    ),
    // Payments, mail and messaging.
    rule(
        "stripe_key",
        r"\b(?:[rs]k_(?:live|test)_[0-9A-Za-z]{16,}|whsec_[0-9A-Za-z]{24,})",
    ),
    rule(
        "square_token",
        r"\b(?:sq0atp-[0-9A-Za-z_\-]{22,}|sq0csp-[0-9A-Za-z_\-]{40,}|EAAA[0-9A-Za-z_\-]{60,})",
    ),
    rule("shopify_token", r"\bshp(?:at|ss|ca|pa)_[0-9a-fA-F]{32}\b"),
    rule(
        "sendgrid_key",
        r"\bSG\.[A-Za-z0-9_\-]{16,32}\.[A-Za-z0-9_\-]{16,64}",
    ),
    rule("mailgun_key", r"\bkey-[0-9a-f]{32}\b"),
    rule("mailchimp_key", r"\b[0-9a-f]{32}-us[0-9]{1,2}\b"),
    rule("twilio_key", r"\bSK[0-9a-f]{32}\b"),
    rule("slack_token", r"\bxox[abposr]-[A-Za-z0-9\-]{10,}"),
    rule(
        "slack_webhook",
        r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/\-]{20,}",
    ),
    rule(
        "discord_webhook",
        r"https://(?:canary\.|ptb\.)?discord(?:app)?\.com/api/webhooks/[0-9]+/[A-Za-z0-9_\-]{20,}",
    ),
    rule(
        "telegram_bot_token",
        r"\b[0-9]{8,10}:AA[A-Za-z0-9_\-]{33}\b",
    ),
    rule("facebook_token", r"\bEAA[CG][A-Za-z0-9]{60,}"),
    // Developer tools and SaaS.
    rule("atlassian_token", r"\bATATT3[A-Za-z0-9_\-=]{60,}"),
    rule("linear_key", r"\blin_api_[A-Za-z0-9]{40}\b"),
    rule(
        "doppler_token",
        r"\bdp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,}",
    ),
    rule("figma_token", r"\bfig[dou]_[A-Za-z0-9_\-]{40,}"),
    rule(
        "notion_token",
        r"\b(?:ntn_[A-Za-z0-9]{40,}|secret_[A-Za-z0-9]{43})\b",
    ),
    rule(
        "grafana_token",
        r"\b(?:glsa_[A-Za-z0-9]{32}_[0-9a-f]{8}|glc_[A-Za-z0-9+/=]{32,})",
    ),
    rule(
        "sentry_token",
        r"\b(?:sntrys_[A-Za-z0-9+/=_]{40,}|sntryu_[0-9a-f]{64})",
    ),
    rule("newrelic_key", r"\bNRAK-[A-Z0-9]{27}\b"),
    rule("dynatrace_token", r"\bdt0c01\.[A-Z0-9]{24}\.[A-Z0-9]{64}\b"),
    rule("mapbox_secret_token", r"\bsk\.eyJ[A-Za-z0-9._\-]{40,}"),
    // Tokens in protocols.
    rule(
        "jwt",
        r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}",
    ),
    rule(
        "basic_auth",
        r"(?i)\bauthorization\s*[:=]\s*[\x22']?basic\s+(?P<s>[A-Za-z0-9+/=]{8,})",
    ),
    rule(
        "bearer_token",
        r"(?i)\bbearer\s+(?P<s>[A-Za-z0-9._~+/=\-]{16,})",
    ),
    rule(
        "url_credentials",
        r"\b[a-zA-Z][a-zA-Z0-9+.\-]*://[^\s:/@\x22']*:(?P<s>[^\s@/\x22']+)@",
    ),
    checked(
        "password",
        r"(?:^|\s)(?:-u|--user)\s+[^\s:]+:(?P<s>[^\s\x22']+)",
        Check::Password,
    ),
    checked(
        "password",
        r"\b(?:mysql|mysqldump|mariadb)\b[^\n]*?\s-p(?P<s>[^\s\x22']+)",
        Check::Password,
    ),
    // A value assigned to a key-like name: `DB_PASSWORD=…`, `"api_key": "…"`,
    // `X-Api-Key: …`, `--token …`.
    checked(
        "secret_assignment",
        r"(?i)(?P<n>[A-Za-z0-9_.\-]*(?:pass|pwd|secret|token|key|auth|credential)[A-Za-z0-9_.\-]*)[\x22']?\s*(?:=|:=|=>|:)\s*[\x22'`]?(?P<s>[^\s\x22'`,;]+)",
        Check::Named,
    ),
    checked(
        "secret_assignment",
        r"(?i)(?:^|\s)--?(?P<n>[A-Za-z0-9\-]*(?:pass|pwd|secret|token|key|auth)[A-Za-z0-9\-]*)\s+[\x22']?(?P<s>[^\s\x22'`]+)",
        Check::Named,
    ),
    // Prose that names the secret: "the password is …", "api key: …".
    checked(
        "password",
        r"(?i)\b(?:password|passphrase)\s+(?:is|was)\s+[\x22'`]?(?P<s>[^\s\x22'`]{4,})",
        Check::Password,
    ),
    checked(
        "secret_assignment",
        r"(?i)\b(?:token|secret|api\s+key|key)\s+(?:is|was)\s+[\x22'`]?(?P<s>[A-Za-z0-9+/=_\-.]{16,})",
        Check::Random,
    ),
];
