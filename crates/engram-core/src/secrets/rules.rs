//! The scanner's rules: one pattern per known secret format, then the generic rules that
//! find a secret by the name it is assigned to.
//!
//! A rule's pattern may name two groups: `s`, the span to redact (the whole match when
//! absent), and `n`, the name the value is assigned to, which [`Check::Named`] classifies.
//! Specific formats come first: when findings overlap, the earlier rule names the kind.
//! Word boundaries are ASCII (`(?-u:\b)`): a Unicode one stops the regex engine's DFA on
//! the first non-ASCII character, making a scan of such text a thousand times slower.

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
    rule(
        "age_secret_key",
        r"(?-u:\b)AGE-SECRET-KEY-1[0-9A-Z]{58}(?-u:\b)",
    ),
    // Model providers.
    rule("anthropic_key", r"(?-u:\b)sk-ant-[A-Za-z0-9_\-]{20,}"),
    rule(
        "openai_key",
        r"(?-u:\b)sk-(?:proj-|svcacct-|admin-|or-v1-)?[A-Za-z0-9_\-]{20,}",
    ),
    rule("huggingface_token", r"(?-u:\b)hf_[A-Za-z0-9]{30,}(?-u:\b)"),
    rule("groq_key", r"(?-u:\b)gsk_[A-Za-z0-9]{40,}(?-u:\b)"),
    rule("replicate_token", r"(?-u:\b)r8_[A-Za-z0-9]{30,}(?-u:\b)"),
    rule("perplexity_key", r"(?-u:\b)pplx-[A-Za-z0-9]{40,}(?-u:\b)"),
    rule("xai_key", r"(?-u:\b)xai-[A-Za-z0-9]{60,}(?-u:\b)"),
    rule(
        "tavily_key",
        r"(?-u:\b)tvly-(?:dev-|prod-)?[A-Za-z0-9]{28,}(?-u:\b)",
    ),
    rule(
        "langsmith_key",
        r"(?-u:\b)lsv2_(?:pt|sk)_[0-9a-f]{32}_[0-9a-f]{10}(?-u:\b)",
    ),
    rule("pinecone_key", r"(?-u:\b)pcsk_[A-Za-z0-9_]{40,}"),
    // Code hosts and registries.
    rule(
        "github_token",
        r"(?-u:\b)(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,})",
    ),
    rule(
        "gitlab_token",
        r"(?-u:\b)(?:glpat|gldt|glptt|glrt|glcbt|glft|glsoat)-[A-Za-z0-9_\-]{20,}",
    ),
    rule("npm_token", r"(?-u:\b)npm_[A-Za-z0-9]{36}(?-u:\b)"),
    rule(
        "npmrc_auth",
        r"(?m)(?:^|[\s/:])(?:_authToken|_auth|_password)\s*=\s*[\x22']?(?P<s>[^\s\x22']{6,})",
    ),
    rule("pypi_token", r"(?-u:\b)pypi-AgE[A-Za-z0-9_\-]{50,}"),
    rule("buildkite_token", r"(?-u:\b)bkua_[0-9a-f]{40}(?-u:\b)"),
    rule(
        "postman_key",
        r"(?-u:\b)PMAK-[0-9a-f]{24}-[0-9a-f]{34}(?-u:\b)",
    ),
    // Clouds.
    rule(
        "aws_access_key",
        r"(?-u:\b)(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|ANPA|ANVA|APKA)[0-9A-Z]{16}(?-u:\b)",
    ),
    rule("google_api_key", r"(?-u:\b)AIza[0-9A-Za-z_\-]{35}"),
    rule("google_oauth_secret", r"(?-u:\b)GOCSPX-[A-Za-z0-9_\-]{24,}"),
    rule("google_oauth_token", r"(?-u:\b)ya29\.[0-9A-Za-z_\-]{20,}"),
    rule(
        "azure_storage_key",
        r"(?i)(?-u:\b)(?:AccountKey|SharedAccessKey)\s*=\s*(?P<s>[A-Za-z0-9+/=]{20,})",
    ),
    rule(
        "azure_sas_signature",
        r"[?&]sig=(?P<s>[A-Za-z0-9%+/=]{20,})",
    ),
    rule(
        "digitalocean_token",
        r"(?-u:\b)do[opr]_v1_[0-9a-f]{64}(?-u:\b)",
    ),
    rule("alibaba_access_key", r"(?-u:\b)LTAI[A-Za-z0-9]{20}(?-u:\b)"),
    rule("tencent_secret_id", r"(?-u:\b)AKID[A-Za-z0-9]{32}(?-u:\b)"),
    rule(
        "hashicorp_vault_token",
        r"(?-u:\b)hv[sbr]\.[A-Za-z0-9_\-]{24,}",
    ),
    rule(
        "terraform_cloud_token",
        r"(?-u:\b)[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=\-]{60,}",
    ),
    rule("pulumi_token", r"(?-u:\b)pul-[0-9a-f]{40}(?-u:\b)"),
    rule(
        "flyio_token",
        r"(?-u:\b)(?:fo1_[A-Za-z0-9_\-]{40,}|fm2_[A-Za-z0-9+/=_\-]{40,})",
    ),
    rule("supabase_token", r"(?-u:\b)sbp_[0-9a-f]{40}(?-u:\b)"),
    rule(
        "databricks_token",
        r"(?-u:\b)dapi[0-9a-f]{32}(?:-\d)?(?-u:\b)",
    ),
    rule("heroku_key", r"(?-u:\b)HRKU-[A-Za-z0-9_\-]{40,}"),
    rule(
        "cloudflare_origin_ca_key",
        r"(?-u:\b)v1\.0-[0-9a-f]{24}-[0-9a-f]{146}(?-u:\b)",
    ),
    // Payments, mail and messaging.
    rule(
        "stripe_key",
        r"(?-u:\b)(?:[rs]k_(?:live|test)_[0-9A-Za-z]{16,}|whsec_[0-9A-Za-z]{24,})",
    ),
    rule(
        "square_token",
        r"(?-u:\b)(?:sq0atp-[0-9A-Za-z_\-]{22,}|sq0csp-[0-9A-Za-z_\-]{40,}|EAAA[0-9A-Za-z_\-]{60,})",
    ),
    rule(
        "shopify_token",
        r"(?-u:\b)shp(?:at|ss|ca|pa)_[0-9a-fA-F]{32}(?-u:\b)",
    ),
    rule(
        "sendgrid_key",
        r"(?-u:\b)SG\.[A-Za-z0-9_\-]{16,32}\.[A-Za-z0-9_\-]{16,64}",
    ),
    rule("mailgun_key", r"(?-u:\b)key-[0-9a-f]{32}(?-u:\b)"),
    rule(
        "mailchimp_key",
        r"(?-u:\b)[0-9a-f]{32}-us[0-9]{1,2}(?-u:\b)",
    ),
    rule("twilio_key", r"(?-u:\b)SK[0-9a-f]{32}(?-u:\b)"),
    rule("slack_token", r"(?-u:\b)xox[abposr]-[A-Za-z0-9\-]{10,}"),
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
        r"(?-u:\b)[0-9]{8,10}:AA[A-Za-z0-9_\-]{33}(?-u:\b)",
    ),
    rule("facebook_token", r"(?-u:\b)EAA[CG][A-Za-z0-9]{60,}"),
    // Developer tools and SaaS.
    rule("atlassian_token", r"(?-u:\b)ATATT3[A-Za-z0-9_\-=]{60,}"),
    rule("linear_key", r"(?-u:\b)lin_api_[A-Za-z0-9]{40}(?-u:\b)"),
    rule(
        "doppler_token",
        r"(?-u:\b)dp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,}",
    ),
    rule("figma_token", r"(?-u:\b)fig[dou]_[A-Za-z0-9_\-]{40,}"),
    rule(
        "notion_token",
        r"(?-u:\b)(?:ntn_[A-Za-z0-9]{40,}|secret_[A-Za-z0-9]{43})(?-u:\b)",
    ),
    rule(
        "grafana_token",
        r"(?-u:\b)(?:glsa_[A-Za-z0-9]{32}_[0-9a-f]{8}|glc_[A-Za-z0-9+/=]{32,})",
    ),
    rule(
        "sentry_token",
        r"(?-u:\b)(?:sntrys_[A-Za-z0-9+/=_]{40,}|sntryu_[0-9a-f]{64})",
    ),
    rule("newrelic_key", r"(?-u:\b)NRAK-[A-Z0-9]{27}(?-u:\b)"),
    rule(
        "dynatrace_token",
        r"(?-u:\b)dt0c01\.[A-Z0-9]{24}\.[A-Z0-9]{64}(?-u:\b)",
    ),
    rule(
        "mapbox_secret_token",
        r"(?-u:\b)sk\.eyJ[A-Za-z0-9._\-]{40,}",
    ),
    // Tokens in protocols.
    rule(
        "jwt",
        r"(?-u:\b)eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}",
    ),
    rule(
        "basic_auth",
        r"(?i)(?-u:\b)authorization\s*[:=]\s*[\x22']?basic\s+(?P<s>[A-Za-z0-9+/=]{8,})",
    ),
    rule(
        "bearer_token",
        r"(?i)(?-u:\b)bearer\s+(?P<s>[A-Za-z0-9._~+/=\-]{16,})",
    ),
    rule(
        "url_credentials",
        r"(?-u:\b)[a-zA-Z][a-zA-Z0-9+.\-]*://[^\s:/@\x22']*:(?P<s>[^\s@/\x22']+)@",
    ),
    checked(
        "password",
        r"(?:^|\s)(?:-u|--user)\s+[^\s:]+:(?P<s>[^\s\x22']+)",
        Check::Password,
    ),
    checked(
        "password",
        r"(?-u:\b)(?:mysql|mysqldump|mariadb)(?-u:\b)[^\n]*?\s-p(?P<s>[^\s\x22']+)",
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
        r"(?i)(?-u:\b)(?:password|passphrase)\s+(?:is|was)\s+[\x22'`]?(?P<s>[^\s\x22'`]{4,})",
        Check::Password,
    ),
    checked(
        "secret_assignment",
        r"(?i)(?-u:\b)(?:token|secret|api\s+key|key)\s+(?:is|was)\s+[\x22'`]?(?P<s>[A-Za-z0-9+/=_\-.]{16,})",
        Check::Random,
    ),
];
