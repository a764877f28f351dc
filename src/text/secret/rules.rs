//! The prefixed and structured rules: one entry per credential format, with the literal
//! anchors that must occur in a text before its regular expression is compiled or run.
//!
//! Why this file is long: `RULES` is one catalogue, a format per entry, read top to
//! bottom like the list in `docs/integrity.md`; split by vendor it would scatter it.

use super::*;

/// One pattern of the catalogue.
pub(super) struct Rule {
    pub(super) kind: &'static str,
    /// Literals of which a match contains at least one: a text without any of them is
    /// not searched, and the pattern is not even compiled.
    pub(super) anchors: Anchors,
    /// A regular expression; `\b` means an ASCII word boundary.
    pub(super) pattern: &'static str,
    /// Applied to capture group 1 if the pattern has one, else to the whole match.
    pub(super) check: fn(&str) -> bool,
    /// Whether the rule also runs on the view with joined lines.
    pub(super) joined: bool,
}

pub(super) enum Anchors {
    Exact(&'static [&'static str]),
    /// Lower case, matched ignoring ASCII case.
    Folded(&'static [&'static str]),
}

/// A token with a fixed prefix: the prefix is the anchor.
pub(super) const fn prefix(
    kind: &'static str,
    anchor: &'static [&'static str],
    pattern: &'static str,
) -> Rule {
    Rule {
        kind,
        anchors: Anchors::Exact(anchor),
        pattern,
        check: any,
        joined: true,
    }
}

/// A token shape whose secret part must also pass `check` (entropy, not words…).
pub(super) const fn checked(
    kind: &'static str,
    anchor: &'static [&'static str],
    pattern: &'static str,
    check: fn(&str) -> bool,
) -> Rule {
    Rule {
        kind,
        anchors: Anchors::Exact(anchor),
        pattern,
        check,
        joined: true,
    }
}

/// A rule about the shape of a line (headers, command lines), which joined lines would
/// only make up; its anchors are case-insensitive.
pub(super) const fn line(
    kind: &'static str,
    anchor: &'static [&'static str],
    pattern: &'static str,
    check: fn(&str) -> bool,
) -> Rule {
    Rule {
        kind,
        anchors: Anchors::Folded(anchor),
        pattern,
        check,
        joined: false,
    }
}

pub(super) fn any(_: &str) -> bool {
    true
}

/// A tool's password flag (`prefix` ends where the password starts): `docker login -p`,
/// `redis-cli -a`, `sqlcmd -P`, `ldapsearch -w`, `zip -P`, `7z -p…`, `keytool -storepass`,
/// `smbclient -U user%…`, `rabbitmqctl add_user name …`, `net use … /user:name …`.
macro_rules! cli_password {
    ($anchors:expr, $prefix:literal) => {
        line(
            "password on a command line (docker login -p, redis-cli -a, …)",
            $anchors,
            concat!($prefix, r#"["']?([!-~&&[^"'-]][!-~&&[^"']]{3,})"#),
            plain_password,
        )
    };
}

/// The catalogue of token shapes (gitleaks, detect-secrets and trufflehog families).
pub(super) const RULES: &[Rule] = &[
    // Cloud providers.
    prefix(
        "AWS access key (AKIA…/ASIA…)",
        &["AKIA", "ASIA", "ABIA", "ACCA"],
        r"\b(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b",
    ),
    prefix(
        "AWS session token",
        &["IQoJb3JpZ2luX2Vj", "FwoGZXIvYXdzE"],
        r"\b(?:IQoJb3JpZ2luX2Vj|FwoGZXIvYXdzE)[A-Za-z0-9+/=]{100,}",
    ),
    prefix(
        "Google API key (AIza…)",
        &["AIza"],
        r"\bAIza[A-Za-z0-9_-]{35}",
    ),
    prefix(
        "Google OAuth client secret (GOCSPX-…)",
        &["GOCSPX-"],
        r"\bGOCSPX-[A-Za-z0-9_-]{28}",
    ),
    prefix(
        "Google OAuth access token (ya29.…)",
        &["ya29."],
        r"\bya29\.[A-Za-z0-9_-]{30,}",
    ),
    prefix(
        "Google OAuth refresh token (1//…)",
        &["1//0"],
        r"\b1//0[A-Za-z0-9_-]{40,}",
    ),
    checked(
        "Firebase Cloud Messaging server key",
        &["AAAA"],
        r"\bAAAA[A-Za-z0-9_-]{7}:([A-Za-z0-9_-]{140})",
        no_padding,
    ),
    Rule {
        kind: "Azure storage or Service Bus key (AccountKey=…)",
        anchors: Anchors::Folded(&["accountkey", "sharedaccesskey"]),
        pattern: r"(?i-u:AccountKey|SharedAccessKey)[ \t]*=[ \t]*[A-Za-z0-9+/]{30,}",
        check: any,
        joined: true,
    },
    checked(
        "Azure shared access signature (sig=…)",
        &["sig="],
        r"(?:[?&;]|\b)sig=([A-Za-z0-9%+/_=-]{30,})",
        token_like,
    ),
    prefix(
        "Azure Entra client secret (…Q~…)",
        &["Q~"],
        r"\b[A-Za-z0-9_~.-]{3}[0-9]Q~[A-Za-z0-9_~.-]{31,34}",
    ),
    prefix(
        "Alibaba Cloud access key (LTAI…)",
        &["LTAI"],
        r"\bLTAI[A-Za-z0-9]{12,20}\b",
    ),
    prefix(
        "Tencent Cloud secret id (AKID…)",
        &["AKID"],
        r"\bAKID[A-Za-z0-9]{32}\b",
    ),
    prefix(
        "DigitalOcean token (dop_v1_…)",
        &["_v1_"],
        r"\bdo[por]_v1_[a-f0-9]{64}",
    ),
    prefix(
        "Heroku token (HRKU-…)",
        &["HRKU-"],
        r"\bHRKU-[A-Za-z0-9_-]{40,}",
    ),
    prefix(
        "Fly.io token (fo1_…)",
        &["fo1_"],
        r"\bfo1_[A-Za-z0-9_-]{39,}",
    ),
    prefix(
        "Fly.io token (FlyV1 fm…)",
        &["FlyV1 "],
        r"\bFlyV1 fm[12][a-z]?_[A-Za-z0-9+/=_-]{40,}",
    ),
    prefix(
        "Netlify token (nfp_…)",
        &["nfp_", "nfc_"],
        r"\bnf[pc]_[A-Za-z0-9]{36,}",
    ),
    prefix("Supabase token (sbp_…)", &["sbp_"], r"\bsbp_[a-f0-9]{40}"),
    prefix(
        "Cloudflare origin CA key (v1.0-…)",
        &["v1.0-"],
        r"\bv1\.0-[a-f0-9]{24}-[a-f0-9]{146}",
    ),
    prefix(
        "Databricks token (dapi…)",
        &["dapi"],
        r"\bdapi[a-f0-9]{32}\b",
    ),
    prefix("Pulumi token (pul-…)", &["pul-"], r"\bpul-[a-f0-9]{40}\b"),
    prefix(
        "Doppler token (dp.st.…)",
        &["dp."],
        r"\bdp\.(?:st|sa|ct|pt|scim|audit)\.(?:[a-z0-9_-]{2,35}\.)?[A-Za-z0-9]{40,44}",
    ),
    prefix(
        "PlanetScale token (pscale_…)",
        &["pscale_"],
        r"\bpscale_(?:tkn|pw|oauth)_[A-Za-z0-9_=.-]{32,}",
    ),
    // Source hosting and CI.
    prefix(
        "GitHub token (ghp_/gho_/ghu_/ghs_/ghr_…)",
        &["ghp_", "gho_", "ghu_", "ghs_", "ghr_"],
        r"\bgh[pousr]_[A-Za-z0-9]{30,}",
    ),
    prefix(
        "GitHub token (github_pat_…)",
        &["github_pat_"],
        r"\bgithub_pat_[A-Za-z0-9_]{20,}",
    ),
    prefix(
        "GitLab token (glpat-/gldt-/glrt-…)",
        &["gl"],
        r"\bgl(?:pat|dt|rt|ptt|ft|soat|imt|agent|cbt|oas|ffct)-[A-Za-z0-9_-]{20,}",
    ),
    prefix(
        "GitLab runner registration token (GR1348941…)",
        &["GR1348941"],
        r"\bGR1348941[A-Za-z0-9_-]{20,}",
    ),
    prefix(
        "Bitbucket app password (ATBB…)",
        &["ATBB"],
        r"\bATBB[A-Za-z0-9_=.-]{32,}",
    ),
    prefix(
        "Atlassian API token (ATATT3…)",
        &["ATATT3", "ATCTT3"],
        r"\bAT(?:ATT|CTT)3[A-Za-z0-9_=.-]{100,}",
    ),
    prefix(
        "Sourcegraph token (sgp_…)",
        &["sgp_"],
        r"\bsgp_(?:[a-fA-F0-9]{16}_|local_)?[a-f0-9]{40}",
    ),
    // Package registries.
    prefix("npm token (npm_…)", &["npm_"], r"\bnpm_[A-Za-z0-9]{36}"),
    prefix(
        "PyPI token (pypi-…)",
        &["pypi-AgE"],
        r"\bpypi-AgE[A-Za-z0-9_-]{50,}",
    ),
    prefix(
        "RubyGems token (rubygems_…)",
        &["rubygems_"],
        r"\brubygems_[a-f0-9]{48}\b",
    ),
    prefix("NuGet API key (oy2…)", &["oy2"], r"\boy2[a-z0-9]{43}\b"),
    prefix(
        "Docker Hub token (dckr_pat_…)",
        &["dckr_"],
        r"\bdckr_(?:pat|oat)_[A-Za-z0-9_-]{20,}",
    ),
    prefix(
        "Clojars token (CLOJARS_…)",
        &["CLOJARS_"],
        r"\bCLOJARS_[a-z0-9]{60}",
    ),
    prefix("JFrog API key (AKCp…)", &["AKCp"], r"\bAKCp[A-Za-z0-9]{69}"),
    prefix(
        "JFrog reference token",
        &["cmVmdGtu"],
        r"\bcmVmdGtu[A-Za-z0-9]{50,}",
    ),
    prefix("Prefect token (pnu_…)", &["pnu_"], r"\bpnu_[A-Za-z0-9]{36}"),
    prefix(
        "Scalingo token (tk-us-…)",
        &["tk-us-"],
        r"\btk-us-[A-Za-z0-9_-]{48}",
    ),
    prefix(
        "Infracost key (ico-…)",
        &["ico-"],
        r"\bico-[A-Za-z0-9]{32}\b",
    ),
    // Secret stores and infrastructure as code.
    prefix(
        "Vault token (hvs.…)",
        &["hvs.", "hvb.", "hvr."],
        r"\bhv[sbr]\.[A-Za-z0-9_-]{24,}",
    ),
    checked(
        "Vault token (s.…)",
        &["s."],
        r"\bs\.([A-Za-z0-9]{24})\b",
        mixed_classes,
    ),
    prefix(
        "Terraform Cloud token (….atlasv1.…)",
        &[".atlasv1."],
        r"\b[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{60,}",
    ),
    prefix(
        "age secret key (AGE-SECRET-KEY-1…)",
        &["AGE-SECRET-KEY-1"],
        r"AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}",
    ),
    // Payments and commerce.
    prefix(
        "Stripe secret key (sk_live_/rk_live_…)",
        &["k_live_", "k_test_"],
        r"\b[sr]k_(?:live|test)_[A-Za-z0-9]{10,}",
    ),
    prefix(
        "Stripe webhook secret (whsec_…)",
        &["whsec_"],
        r"\bwhsec_[A-Za-z0-9+/=]{24,}",
    ),
    prefix(
        "Shopify token (shpat_/shpss_…)",
        &["shp"],
        r"\bshp(?:at|ss|ca|pa)_[a-fA-F0-9]{32}",
    ),
    prefix(
        "Square token (sq0atp-/sq0csp-…)",
        &["sq0"],
        r"\bsq0(?:atp|csp)-[A-Za-z0-9_-]{22,}",
    ),
    checked(
        "Square access token (EAAA…)",
        &["EAAA"],
        r"\bEAAA([A-Za-z0-9_-]{60})",
        no_padding,
    ),
    checked(
        "Facebook access token (EAA…)",
        &["EAAM", "EAAC"],
        r"\bEAA[MC]([A-Za-z0-9]{100,})",
        no_padding,
    ),
    prefix(
        "Braintree access token",
        &["access_token$"],
        r"access_token\$(?:production|sandbox)\$[0-9a-z]{16}\$[0-9a-f]{32}",
    ),
    // Messaging and chat.
    prefix(
        "Slack token (xox?-…)",
        &["xox"],
        r"\bxox[a-z]-[A-Za-z0-9-]{10,}",
    ),
    prefix(
        "Slack refresh token (xoxe.xox?-…)",
        &["xoxe."],
        r"\bxoxe\.xox[a-z]-[A-Za-z0-9-]{10,}",
    ),
    prefix(
        "Slack app token (xapp-…)",
        &["xapp-"],
        r"\bxapp-[0-9]-[A-Za-z0-9-]{20,}",
    ),
    prefix(
        "Slack webhook URL",
        &["hooks.slack.com/"],
        r"hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9]{8,}/[A-Za-z0-9]{8,}/[A-Za-z0-9]{16,}",
    ),
    prefix(
        "Discord webhook URL",
        &["/api/webhooks/"],
        r"discord(?:app)?\.com/api/webhooks/[0-9]{15,20}/[A-Za-z0-9_-]{40,}",
    ),
    checked(
        "Discord bot token",
        // The first part is base64 of the bot's numeric id, so it starts with one of these.
        &["MT", "Mj", "Mz", "ND", "NT", "Nj", "Nz", "OD", "OT"],
        r"\b(?:M[Tjz]|N[DTjz]|O[DT])[A-Za-z0-9_-]{22,26}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,40}\b",
        mixed_classes,
    ),
    prefix(
        "Telegram bot token",
        &[":AA"],
        r"\b[0-9]{8,10}:AA[A-Za-z0-9_-]{32,}",
    ),
    prefix(
        "Microsoft Teams webhook URL",
        &["webhook"],
        r"(?:\.webhook\.office\.com/webhookb2|outlook\.office(?:365)?\.com/webhook)/[A-Za-z0-9@-]{20,}",
    ),
    prefix("Twilio API key (SK…)", &["SK"], r"\bSK[0-9a-fA-F]{32}\b"),
    prefix(
        "SendGrid API key (SG.…)",
        &["SG."],
        r"\bSG\.[A-Za-z0-9_-]{16,32}\.[A-Za-z0-9_-]{30,50}",
    ),
    prefix(
        "Mailgun API key (key-…)",
        &["key-"],
        r"\bkey-[0-9a-zA-Z]{32}\b",
    ),
    prefix(
        "Mailchimp API key (…-us12)",
        &["-us"],
        r"\b[0-9a-f]{32}-us[0-9]{1,2}\b",
    ),
    // Observability.
    prefix(
        "New Relic key (NRAK-…)",
        &["NRAK-", "NRII-", "NRAA-", "NRRA-"],
        r"\bNR(?:AK|II|AA|RA)-[A-Z0-9]{27}\b",
    ),
    prefix(
        "New Relic browser key (NRJS-…)",
        &["NRJS-"],
        r"\bNRJS-[a-f0-9]{19}\b",
    ),
    prefix(
        "Sentry token (sntrys_/sntryu_…)",
        &["sntry"],
        r"\bsntry[suio]_[A-Za-z0-9+/=_-]{40,}",
    ),
    prefix(
        "Grafana token (glc_…)",
        &["glc_"],
        r"\bglc_[A-Za-z0-9+/=_-]{32,}",
    ),
    prefix(
        "Grafana service account token (glsa_…)",
        &["glsa_"],
        r"\bglsa_[A-Za-z0-9]{32}_[a-fA-F0-9]{8}",
    ),
    prefix(
        "Grafana API key (eyJrIjoi…)",
        &["eyJrIjoi"],
        r"\beyJrIjoi[A-Za-z0-9+/=_-]{50,}",
    ),
    prefix(
        "Dynatrace token (dt0c01.…)",
        &["dt0c01."],
        r"\bdt0c01\.[A-Z0-9]{24}\.[A-Z0-9]{64}",
    ),
    // Productivity and developer SaaS.
    prefix(
        "Linear API key (lin_api_…)",
        &["lin_"],
        r"\blin_(?:api|oauth)_[A-Za-z0-9]{40}",
    ),
    prefix(
        "Notion token (secret_…)",
        &["secret_"],
        r"\bsecret_[A-Za-z0-9]{43}\b",
    ),
    prefix("Notion token (ntn_…)", &["ntn_"], r"\bntn_[A-Za-z0-9]{40,}"),
    prefix(
        "Postman API key (PMAK-…)",
        &["PMAK-"],
        r"\bPMAK-[a-f0-9]{24}-[a-f0-9]{34}",
    ),
    prefix(
        "Airtable token (pat….…)",
        &["pat"],
        r"\bpat[A-Za-z0-9]{14}\.[a-f0-9]{64}",
    ),
    prefix(
        "Contentful token (CFPAT-…)",
        &["CFPAT-"],
        r"\bCFPAT-[A-Za-z0-9_-]{43}",
    ),
    prefix(
        "Figma token (figd_…)",
        &["figd_"],
        r"\bfigd_[A-Za-z0-9_-]{40}",
    ),
    prefix(
        "Typeform token (tfp_…)",
        &["tfp_"],
        r"\btfp_[A-Za-z0-9_.=-]{40,}",
    ),
    prefix(
        "Mapbox secret token (sk.eyJ…)",
        &["sk.eyJ"],
        r"\bsk\.eyJ[A-Za-z0-9_-]{20,}\.[A-Za-z0-9_-]{10,}",
    ),
    checked(
        "Twitter bearer token",
        &["AAAAAAAAAAAAAAAAAAAAAA"],
        r"\bA{22}([A-Za-z0-9%]{80,})",
        percent_escaped,
    ),
    prefix(
        "Django secret key (django-insecure-…)",
        &["django-insecure-"],
        r#"django-insecure-[!-~&&[^"'`]]{30,}"#,
    ),
    // AI providers.
    checked(
        "API secret key (sk-…)",
        &["sk-"],
        r"\bsk-([A-Za-z0-9_-]{20,})",
        not_wordy,
    ),
    prefix(
        "Hugging Face token (hf_…)",
        &["hf_"],
        r"\bhf_[A-Za-z0-9]{30,}",
    ),
    prefix(
        "Hugging Face org token (api_org_…)",
        &["api_org_"],
        r"\bapi_org_[A-Za-z0-9]{30,}",
    ),
    prefix("Replicate token (r8_…)", &["r8_"], r"\br8_[A-Za-z0-9]{37}"),
    prefix("Groq API key (gsk_…)", &["gsk_"], r"\bgsk_[A-Za-z0-9]{48,}"),
    prefix(
        "Perplexity API key (pplx-…)",
        &["pplx-"],
        r"\bpplx-[A-Za-z0-9]{40,}",
    ),
    prefix("xAI API key (xai-…)", &["xai-"], r"\bxai-[A-Za-z0-9]{70,}"),
    // Structured credentials.
    prefix(
        "JSON web token (eyJ….eyJ….…)",
        &[".ey"],
        r"\bey[A-Za-z0-9_-]{8,}\.ey[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}",
    ),
    prefix(
        "private key block",
        &["BEGIN"],
        r"-{2,} ?BEGIN ?[A-Z0-9 ]{0,40}PRIVATE ?KEY",
    ),
    prefix(
        "PuTTY private key file",
        &["PuTTY-User-Key-File-"],
        r"PuTTY-User-Key-File-[0-9]+: ",
    ),
    // The body of a private key without its header: base64 of PKCS#1 or PKCS#8 DER
    // (`MIIE…IBAAKC…`, `MIIE…IBADAN…`), of a SEC1 P-256 key, of an OpenSSH key.
    prefix(
        "private key (base64 DER body)",
        &["MII"],
        r"\bMII[A-Za-z0-9+/]{2}[AEIMQUYcgkosw048]IBA(?:DA|AK)[A-Za-z0-9+/]{40,}",
    ),
    prefix(
        "private key (base64 DER body)",
        &["MHcCAQEEI"],
        r"\bMHcCAQEEI[A-Za-z0-9+/]{40,}",
    ),
    prefix(
        "private key (OpenSSH body)",
        &["b3BlbnNzaC1rZXktdjE"],
        r"\bb3BlbnNzaC1rZXktdjE[A-Za-z0-9+/]{20,}",
    ),
    checked(
        "URL with a password (scheme://user:password@host)",
        &["://"],
        r"\b[A-Za-z][A-Za-z0-9+.-]*://[!-~&&[^/?#@:]]*:([!-~&&[^/?#@]]+)@[A-Za-z0-9\[._-]",
        url_password,
    ),
    checked(
        "URL with a token as user (scheme://token@host)",
        &["://"],
        r"\bhttps?://([A-Za-z0-9_-]{20,})@[A-Za-z0-9._-]",
        token_like,
    ),
    // Headers and command lines.
    line(
        "Authorization: Bearer header",
        &["bearer"],
        r"(?:[Bb]earer|BEARER)[ \t]+([A-Za-z0-9._~+/=-]{16,})",
        bearer_value,
    ),
    line(
        "Authorization: Basic header",
        &["authorization"],
        r#"(?:[Aa]uthorization|AUTHORIZATION)["']?[ \t]*[:=][ \t]*["']?[ \t]*(?:[Bb]asic|BASIC)[ \t]+([A-Za-z0-9+/=]{8,})"#,
        basic_value,
    ),
    line(
        "Authorization header with a token",
        &["authorization"],
        r#"(?:[Aa]uthorization|AUTHORIZATION)["']?[ \t]*[:=][ \t]*["']?[ \t]*(?:[Tt]oken|TOKEN|[Aa]pi-?[Kk]ey|API-?KEY|[Kk]ey|[Bb]ot|sso-key)[ \t]+([A-Za-z0-9._~+/=-]{16,})"#,
        token_like,
    ),
    line(
        "Okta API token (SSWS …)",
        &["ssws"],
        r"\bSSWS[ \t]+([A-Za-z0-9_-]{40,})",
        any,
    ),
    line(
        "password in a .netrc line",
        &["machine"],
        r"\bmachine[ \t]+[!-~]+[ \t]+login[ \t]+[!-~]+[ \t]+password[ \t]+([!-~]{4,})",
        plain_password,
    ),
    line(
        "password on a command line (-u user:password)",
        &["-u"],
        r#"(?:^|[ \t])(?:-u|--user)[ \t]+["']?[!-~&&[^:"']]+:([!-~&&[^"'@]]{3,})"#,
        plain_password,
    ),
    line(
        "password on a command line (mysql -p…)",
        &["mysql", "mariadb"],
        r"\b(?:mysql|mysqldump|mysqladmin|mariadb)\b[ -~\t]{0,200}?[ \t]-p([!-~&&[^'-]][!-~&&[^']]{3,})",
        plain_password,
    ),
    line(
        "password on a command line (sshpass -p)",
        &["sshpass"],
        r#"\bsshpass[ \t]+-p[ \t]*["']?([!-~&&[^"']]{4,})"#,
        plain_password,
    ),
    // The password flags of common command-line tools, each with its own flag (one rule
    // per tool, so only the tool named in a text costs a search).
    cli_password!(
        &["login"],
        r"\b(?:(?:docker|podman|buildah|nerdctl|skopeo|oras|az)[ \t]+login|helm[ \t]+registry[ \t]+login)\b[ -~\t]{0,200}?[ \t](?:-p|--password)(?:[ \t]+|=)"
    ),
    cli_password!(
        &["mongo"],
        r"\bmongo(?:sh|dump|restore|export|import|stat|top|files)?\b[ -~\t]{0,200}?[ \t](?:-p|--password)(?:[ \t]+|=)"
    ),
    cli_password!(
        &["redis-cli"],
        r"\bredis-cli\b[ -~\t]{0,200}?[ \t](?:-a|--pass)[ \t]+"
    ),
    cli_password!(
        &["sqlcmd", "bcp", "osql"],
        r"\b(?:sqlcmd|bcp|osql)\b[ -~\t]{0,200}?[ \t]-P[ \t]*"
    ),
    cli_password!(&["ldap"], r"\bldap[a-z]+\b[ -~\t]{0,200}?[ \t]-w[ \t]+"),
    cli_password!(&["zip"], r"\b(?:zip|unzip)\b[ -~\t]{0,200}?[ \t]-P[ \t]+"),
    cli_password!(&["7z"], r"\b7za?\b[ -~\t]{0,200}?[ \t]-p"),
    cli_password!(
        &["keytool"],
        r"\bkeytool\b[ -~\t]{0,200}?[ \t]-(?:src|dest)?(?:store|key)pass[ \t]+"
    ),
    cli_password!(
        &["smbclient"],
        r#"\bsmbclient\b[ -~\t]{0,200}?[ \t]-U[ \t]*[!-~&&[^%"']]+%"#
    ),
    cli_password!(
        &["rabbitmqctl"],
        r"\brabbitmqctl[ \t]+(?:add_user|change_password)[ \t]+[!-~]+[ \t]+"
    ),
    cli_password!(
        &["net use"],
        r"\bnet[ \t]+use\b[ -~\t]{0,200}?[ \t]/user:[!-~]+[ \t]+"
    ),
    line(
        "password on a command line (htpasswd -b)",
        &["htpasswd"],
        r#"\bhtpasswd[ \t]+-[A-Za-z]*b[A-Za-z]*(?:[ \t]+-[A-Za-z]+)*(?:[ \t]+[!-~&&[^-]][!-~]*){1,2}[ \t]+["']?([!-~&&[^"'-]][!-~&&[^"']]{3,})"#,
        plain_password,
    ),
    // Oracle's `user/password@database` (sqlplus, Data Pump, JDBC thin URLs).
    line(
        "password in an Oracle connect string (user/password@db)",
        &["jdbc:oracle:", "sqlplus", "sqlldr", "expdp", "impdp"],
        r#"(?:\bjdbc:oracle:(?:thin|oci):|\b(?:sqlplus|sqlldr|expdp|impdp)[ \t]+(?:-[A-Za-z]+[ \t]+)*)["']?[A-Za-z0-9_$#.]+/([^@\s/"']+)@"#,
        plain_password,
    ),
    // `Authorization:` with any scheme (`Digest …`, `ApiKey …`, `SharedKey …`, a vendor's
    // own) or none, when what follows holds a credential-like value.
    line(
        "Authorization header with credentials",
        &["authorization"],
        r#"(?:[Aa]uthorization|AUTHORIZATION)\\?["']?[ \t]*[:=][ \t]*\\?["'`]?[ \t]*([!-~][^\r\n]{3,400})"#,
        auth_credentials,
    ),
    // `--password S3cr3t!`, `aws configure set aws_secret_access_key …`, `setx TOKEN …`:
    // a name and its value separated by blanks only.
    line(
        "credential on a command line (--name value)",
        &["-"],
        r"(?:^|[ \t])--?([A-Za-z][A-Za-z0-9_-]{1,40}[ \t]+[!-~]{4,})",
        spaced_pair,
    ),
    line(
        "credential on a command line (set name value)",
        &["set"],
        r"\b(?:setx|SETX|set[ \t]+-[A-Za-z]+|set|SET)[ \t]+([A-Za-z_][A-Za-z0-9_.-]{1,60}[ \t]+[!-~]{4,})",
        spaced_pair,
    ),
    // Prose that states one: `the wifi password is Tr0ub4dor&3`.
    line(
        "password stated in prose (password is …)",
        &["pass", "pwd"],
        r#"\b(?:[Pp]assword|PASSWORD|passwd|[Pp]assphrase|pwd)(?:[ \t]+(?:for|of|on)[ \t][ -~]+?)?[ \t]+(?:is|was|=)[ \t]+["'`]?([!-~&&[^"'`]]+)"#,
        stated_password,
    ),
    line(
        "secret stated in prose (token is …)",
        &["token", "secret", "key"],
        r#"\b(?:[Tt]oken|TOKEN|[Ss]ecret|SECRET|(?:[Aa]pi|API|[Aa]ccess)[ \t]+(?:[Kk]ey|KEY))(?:[ \t]+(?:for|of|on)[ \t][ -~]+?)?[ \t]+(?:is|was|=)[ \t]+["'`]?([!-~&&[^"'`]]+)"#,
        stated_secret,
    ),
];

/// The rules with an anchor in `text`, found in one pass over its byte pairs.
pub(super) fn anchored_rules(text: &str) -> [bool; RULES.len()] {
    let table = &*ANCHORS;
    let mut found = [false; RULES.len()];
    let b = text.as_bytes();
    for &(byte, rule) in &table.single {
        found[rule] = found[rule] || b.contains(&byte);
    }
    for i in 0..b.len().saturating_sub(1) {
        let rest = &b[i..];
        for &(anchor, rule) in table.exact.get(pair_key(b[i], b[i + 1])) {
            found[rule] = found[rule] || rest.starts_with(anchor.as_bytes());
        }
        let lower = pair_key(b[i].to_ascii_lowercase(), b[i + 1].to_ascii_lowercase());
        for &(anchor, rule) in table.folded.get(lower) {
            found[rule] = found[rule]
                || rest
                    .get(..anchor.len())
                    .is_some_and(|r| r.eq_ignore_ascii_case(anchor.as_bytes()));
        }
    }
    found
}

pub(super) fn pair_key(a: u8, b: u8) -> usize {
    usize::from(a) << 8 | usize::from(b)
}

/// The anchors of [`RULES`], found by their first two bytes.
pub(super) struct AnchorTable {
    /// Anchors of one byte, looked for directly.
    pub(super) single: Vec<(u8, usize)>,
    pub(super) exact: PairIndex,
    /// Folded anchors, by their (lower-case) first two bytes.
    pub(super) folded: PairIndex,
}

/// `(anchor, rule)` entries grouped by the pair of bytes they start with.
pub(super) struct PairIndex {
    pub(super) entries: Vec<(&'static str, usize)>,
    /// `entries[starts[p]..starts[p + 1]]` start with pair `p`.
    pub(super) starts: Vec<u16>,
}

impl PairIndex {
    fn new(mut anchors: Vec<(usize, &'static str, usize)>) -> PairIndex {
        anchors.sort_unstable();
        // `starts[p + 1]` counts the anchors whose pair is at most `p`. The catalogue has
        // a few hundred anchors, far fewer than `u16::MAX`.
        let mut starts = vec![0u16; 65537];
        for &(pair, _, _) in &anchors {
            starts[pair + 1] += 1;
        }
        for p in 1..starts.len() {
            starts[p] += starts[p - 1];
        }
        let entries = anchors.into_iter().map(|(_, w, r)| (w, r)).collect();
        PairIndex { entries, starts }
    }

    fn get(&self, pair: usize) -> &[(&'static str, usize)] {
        let from = usize::from(self.starts[pair]);
        let to = usize::from(self.starts[pair + 1]);
        &self.entries[from..to]
    }
}

pub(super) static ANCHORS: LazyLock<AnchorTable> = LazyLock::new(|| {
    let mut single = Vec::new();
    let mut exact = Vec::new();
    let mut folded = Vec::new();
    for (rule, r) in RULES.iter().enumerate() {
        let (words, into) = match r.anchors {
            Anchors::Exact(words) => (words, &mut exact),
            Anchors::Folded(words) => (words, &mut folded),
        };
        for &w in words {
            match w.as_bytes() {
                [] => {}
                [one] => single.push((*one, rule)),
                [a, b, ..] => into.push((pair_key(*a, *b), w, rule)),
            }
        }
    }
    AnchorTable {
        single,
        exact: PairIndex::new(exact),
        folded: PairIndex::new(folded),
    }
});

/// Each rule's pattern, compiled once, the first time a text holds one of its anchors.
pub(super) static COMPILED: [OnceLock<Regex>; RULES.len()] =
    [const { OnceLock::new() }; RULES.len()];

pub(super) fn compile(rule: &Rule) -> Regex {
    // `\b` is meant as an ASCII boundary; the Unicode one is bigger and slower.
    let pattern = rule.pattern.replace(r"\b", r"(?-u:\b)");
    // The patterns are constants, checked by the tests: a failure is a bug in this file.
    Regex::new(&pattern).unwrap_or_else(|e| panic!("rule {:?}: {e}", rule.kind))
}
