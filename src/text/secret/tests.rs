//! The detector's own examples and the catalogues' figures.

use super::*;

#[test]
fn credentials_are_found() {
    let cases = [
        "key is sk-proj-abcdefghijklmnopqrstuvwx",
        "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
        "github_pat_11ABCDEFG0123456789_abcdefghijk",
        "npm_abcdefghijklmnopqrstuvwxyz0123456789",
        "AKIAIOSFODNN7EXAMPLE",
        "xoxb-123456789012-abcdefghij",
        "-----BEGIN OPENSSH PRIVATE KEY-----\nabc",
        "export API_KEY=abcd1234efgh",
        "password: hunter22",
        "DB_PASSWORD=hunter2222",
        "STRIPE_API_KEY=rk_live_abcdef",
        "xoxe-1-abcdefghijklmnopqrst",
        "{\"password\": \"correct horse\"}",
        // The issue's examples.
        "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "postgres://admin:S3cr3tP4ss@db/prod",
        "https://hooks.slack.com/services/T0ABCDEF1/B0ABCDEFG12/aB3dE5gH7jK9mN1pQ3sT5vW7",
        "glpat-Ab3De5Gh7Jk9Mn1Pq3St",
        "Authorization: Bearer Ab3De5Gh7Jk9Mn1Pq3St5Vw7Yz",
        "-----BEGIN RSA\nPRIVATE KEY-----\nMIIE",
        "-----BEGIN OPENSSH PRIV\nATE KEY-----",
    ];
    for c in cases {
        assert!(find(c).is_some(), "{c}");
    }
}

#[test]
fn prose_is_not_refused() {
    let cases = [
        "we rotate the api key every month",
        "the password is in 1Password",
        "password: see vault",
        "task-runner uses sk-learn",
        "desk-ghp_x",
        "AKIA is the prefix of AWS keys",
        "-----BEGIN CERTIFICATE-----",
        "",
        "api_key_env: OPENAI_API_KEY",
        "password policy: 12 chars",
        "NODE_AUTH_TOKEN: ${{ secrets.NPM_TOKEN }}",
        "curl -H \"Authorization: Bearer $GITHUB_TOKEN\" https://api.github.com/user",
        "postgres://app@db:5432/app",
        "sk-learn-compatible-estimators-for-everyone",
        "pk_live_51MzKqPLkdIwHu7ixA9s8T2bQcJ4vXy3R0nWm5Gh is the publishable key",
    ];
    for c in cases {
        assert_eq!(find(c), None, "{c}");
    }
}

#[test]
fn names_say_whether_a_value_is_a_secret() {
    use NameClass::{Password, Secret};
    let cases = [
        ("DB_PASSWORD", Some(Password)),
        ("PGPASSWORD", Some(Password)),
        ("db_pass", Some(Password)),
        ("passphrase", Some(Password)),
        ("aws_secret_access_key", Some(Secret)),
        ("clientSecret", Some(Secret)),
        ("X-API-Key", Some(Secret)),
        ("_authToken", Some(Secret)),
        ("AccountKey", Some(Secret)),
        ("STRIPE_KEY", Some(Secret)),
        ("auth", Some(Secret)),
        ("api_key_env", None),
        ("password_min_length", None),
        ("token_ttl", None),
        ("secret_name", None),
        ("private_key_path", None),
        ("cache_key", None),
        ("public_key", None),
        ("idempotency_key", None),
        ("ClientToken", None),
        ("NextToken", None),
        ("max_tokens", None),
        ("bypass", None),
    ];
    for (name, class) in cases {
        assert_eq!(classify_name(name), class, "{name}");
    }
}

#[test]
fn values_that_stand_for_a_secret_are_not_one() {
    for text in [
        "password = \"********\"",
        "client_secret: <redacted>",
        "API_TOKEN=${{ secrets.API_TOKEN }}",
        "DB_PASSWORD=changeme",
        "token: $(gh auth token)",
        "password: stored-in-1password",
        "SECRET_KEY = os.environ[\"DJANGO_SECRET_KEY\"]",
        "DATABASE_URL=postgres://app:${DB_PASSWORD}@db:5432/app",
        "postgres://user:password@localhost/db",
        "Authorization: Bearer <token>",
    ] {
        assert_eq!(find(text), None, "{text}");
    }
}

#[test]
fn pem_headers_are_found_however_wrapped() {
    for text in [
        "-----BEGIN RSA PRIVATE KEY-----",
        "-----BEGIN RSA\nPRIVATE KEY-----",
        "-----BEGIN OPENSSH PRIV\nATE KEY-----",
        "key: |\n  -----BEGIN PRIVATE\n  KEY-----",
        "> -----BEGIN EC\n> PRIVATE KEY-----",
        "{\"private_key\": \"-----BEGIN PRIVATE KEY-----\\nMIIE\"}",
        "-----BEGIN PGP PRIVATE KEY BLOCK-----",
        "-----BEGIN\u{200B} RSA PRIVATE KEY-----",
    ] {
        assert!(find(text).is_some(), "{text:?}");
    }
    assert_eq!(find("-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkq"), None);
}

#[test]
fn zero_width_characters_do_not_hide_a_token() {
    for zw in [
        '\u{200B}', '\u{200C}', '\u{200D}', '\u{2060}', '\u{FEFF}', '\u{00AD}',
    ] {
        let text = format!("note: ghp_abcdefghij{zw}klmnopqrstuvwxyz0123456789");
        let f = find(&text).unwrap_or_else(|| panic!("{zw:?}"));
        assert_eq!(f.offset, 6, "{zw:?}");
        assert!(text.is_char_boundary(f.offset));
    }
}

#[test]
fn base64_of_a_token_is_found() {
    // base64 of "ghp_abcdefghijklmnopqrstuvwxyz0123456789" and of "AKIAIOSFODNN7EXAMPLE".
    for encoded in [
        "Z2hwX2FiY2RlZmdoaWprbG1ub3BxcnN0dXZ3eHl6MDEyMzQ1Njc4OQ==",
        "QUtJQUlPU0ZPRE5ON0VYQU1QTEU=",
    ] {
        let text = format!("value: {encoded}");
        assert_eq!(find(&text).map(|f| f.offset), Some(7), "{encoded}");
    }
    // Ordinary text in base64 stays ordinary.
    assert_eq!(find("aGVsbG8gd29ybGQsIHRoaXMgaXMgZmluZQ=="), None);
}

#[test]
fn offsets_point_at_the_credential_and_never_split_a_character() {
    let text = "é line one\nsecond line has ghp_abcdefghijklmnopqrstuvwxyz0123456789";
    let f = find(text).expect("found");
    assert_eq!(&text[f.offset..f.offset + 4], "ghp_");
    // Found only once the lines are joined: the offset is still in the original.
    let wrapped = "ü see sk-proj-abcdefghij\n  klmnopqrstuvwxyz";
    let f = find(wrapped).expect("found");
    assert!(wrapped.is_char_boundary(f.offset));
    assert_eq!(&wrapped[f.offset..f.offset + 3], "sk-");
}

#[test]
fn every_rule_compiles_and_holds_an_anchor() {
    for rule in RULES {
        let re = compile(rule);
        let words = match rule.anchors {
            Anchors::Exact(words) | Anchors::Folded(words) => words,
        };
        assert!(!words.is_empty(), "{}", rule.kind);
        assert!(re.captures_len() <= 2, "{}", rule.kind);
    }
}

#[test]
fn a_finding_never_holds_the_secret() {
    let f = find("ghp_abcdefghijklmnopqrstuvwxyz0123456789").expect("found");
    assert!(!f.kind.contains("abcdef"));
}

/// The catalogues of docs/integrity.md, gated at what is measured: every credential refused, no
/// ordinary fact refused.
#[test]
fn catalogues_are_measured() {
    fn samples(text: &str) -> Vec<String> {
        text.lines()
            .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
            .map(|l| l.replace(r"\n", "\n"))
            .collect()
    }
    let credentials = samples(include_str!(
        "../../../tests/fixtures/secrets/credentials.txt"
    ));
    let ordinary = samples(include_str!("../../../tests/fixtures/secrets/ordinary.txt"));
    assert!(credentials.len() >= 240 && ordinary.len() >= 800);
    let missed: Vec<_> = credentials.iter().filter(|c| find(c).is_none()).collect();
    let refused: Vec<_> = ordinary.iter().filter(|o| find(o).is_some()).collect();
    eprintln!(
        "credentials refused: {} of {}; ordinary facts refused: {} of {}",
        credentials.len() - missed.len(),
        credentials.len(),
        refused.len(),
        ordinary.len()
    );
    assert!(
        missed.is_empty(),
        "{} of {} credentials missed: {missed:#?}",
        missed.len(),
        credentials.len()
    );
    assert!(
        refused.is_empty(),
        "{} of {} ordinary facts refused: {refused:#?}",
        refused.len(),
        ordinary.len()
    );
}

/// The forms issue 34 lists as missed, and their harmless look-alikes.
#[test]
fn generic_forms_of_issue_34() {
    let found = [
        "<password>Tzg2!iC95B2</password>",
        "<ns:Password>G6My#isTI47</ns:Password>",
        r#"<add key="ApiKey" value="ZA4NTF5doQTBkCfvAGfyUPzEBLdnM2udroJ2" />"#,
        r#"<property name="password" value="Nafn+8l3Zg3"/>"#,
        "db.example.com:5432:app:app_user:dxug+P6BGo9",
        "*:*:*:postgres:Gg2O%r3gmD6",
        "docker login -u deploy-bot -p GPgX#BUVBr6 registry.example.com",
        "redis-cli -h cache -a 6kkM!Nxth08 ping",
        "sqlcmd -S sql-prod -U sa -P 'LR1w#Mx5hh1'",
        "ldapsearch -x -D cn=admin,dc=example -w I01T%W8xLR2",
        "keytool -list -keystore ks.jks -storepass fsBF+oYBa58",
        "sqlplus system/mbGw+94E2X2@//db.example.com:1521/ORCL",
        r#"Authorization: Digest username="admin", realm="api", nonce="becc5dd11b333df42d314e73e4e7a1c2", response="6629fae49393a05397450978507c4ef1""#,
        "Authorization: ApiKey cFE4eE41R1VOWFlYN0FrV2REY286OGdtR0k3NGZCOXNPMnRpQU5ydFVKRA==",
        "Authorization: SharedKey stdemo042:rst+FKmMQmz24HrFDIZNEdQOoDJOg71aoYXNVpAMqX8=",
        "Authorization: GenieKey e09ca2ce-e8ff-ad68-cf46-81853e58375b",
        "Authorization: Basic admin:aqOE*tbJLM2",
        r#"headers = {"Authorization": "Custom TqTcCAnqOZ2zBvcs0xfXBgSCzFOFiFGZP3eDIFEl"}"#,
        r#""{\"password\": \"eVG8^Jzapc5\"}""#,
        r#"{"body": "{\"api_key\": \"205rnHQslXqj7oiU4GIfPwkeLwyzL2Bw\"}"}"#,
        "jdbc:sqlserver://sql:1433;databaseName=app;user=sa;password=tiof%9jm2j2;",
        "Server=db;Database=app;User Id=app;Password=Cw9j^IFcZ73;",
    ];
    for text in found {
        assert!(find(text).is_some(), "{text}");
    }
    let ordinary = [
        "<password>${env.DB_PASSWORD}</password>",
        "<password_hash>$2b$12$abcdefghijklmnopqrstuv</password_hash>",
        "the <password> element must reference an env var",
        "fe80:0:0:0:0:0:0:1 is link-local",
        "10:30:00:UTC:daily",
        "docker login -u ci --password-stdin ghcr.io",
        "docker run -p 8080:80 nginx",
        "docker login -u ci -p $CR_PAT ghcr.io",
        "mysql -u root -p",
        "Authorization: Bearer <token>",
        "Authorization: Negotiate is what the Kerberos proxy sends",
        "authorization = base64.decodebytes(authorization)",
        r#""{\"token\": \"${API_TOKEN}\"}""#,
        "Server=db;Database=app;Integrated Security=true;",
        "sqlplus / as sysdba",
    ];
    for text in ordinary {
        assert_eq!(find(text), None, "{text}");
    }
}

/// What `find` costs once warm, on a typical short fact, on a 4 KB text and on each
/// ordinary fact: `CARGO_PROFILE_DEV_OPT_LEVEL=3 cargo test --lib secret::tests::find_speed
/// -- --ignored --nocapture` (this crate optimised as the release build is). Times are
/// the thread's CPU time, best of seven batches: the machine may be shared.
#[test]
#[ignore]
fn find_speed() {
    use std::hint::black_box;
    fn cpu_micros() -> f64 {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: `ts` is a valid, writable timespec.
        unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
        ts.tv_sec as f64 * 1e6 + ts.tv_nsec as f64 / 1e3
    }
    let ordinary: Vec<&str> = include_str!("../../../tests/fixtures/secrets/ordinary.txt")
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .collect();
    let short = "the nightly export runs at 02:00 UTC on db-prod-1, writes to s3://acme-exports/daily; owner: Dana K.";
    let mut long = String::new();
    for line in ordinary.iter().cycle() {
        if long.len() + line.len() >= 4096 {
            break;
        }
        long.push_str(line);
        long.push('\n');
    }
    let best = |batch: &dyn Fn() -> f64| (0..7).map(|_| batch()).fold(f64::INFINITY, f64::min);
    let time = |text: &str, rounds: u32| {
        black_box(find(text));
        best(&|| {
            let start = cpu_micros();
            for _ in 0..rounds {
                black_box(find(black_box(text)));
            }
            (cpu_micros() - start) / f64::from(rounds)
        })
    };
    let cold = cpu_micros();
    black_box(find(black_box("cold start: one api key and one token")));
    eprintln!("first call: {:.0} µs", cpu_micros() - cold);
    eprintln!("{}-byte fact: {:.2} µs", short.len(), time(short, 20_000));
    eprintln!("{}-byte text: {:.1} µs", long.len(), time(&long, 500));
    for o in &ordinary {
        black_box(find(o));
    }
    let each = best(&|| {
        let start = cpu_micros();
        for o in &ordinary {
            black_box(find(black_box(o)));
        }
        (cpu_micros() - start) / ordinary.len() as f64
    });
    eprintln!(
        "each of {} ordinary facts: {each:.2} µs on average",
        ordinary.len()
    );
}

/// The ordinary catalogue's facts (for the rule comparisons below).
fn ordinary_facts() -> Vec<String> {
    include_str!("../../../tests/fixtures/secrets/ordinary.txt")
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| l.replace(r"\n", "\n"))
        .collect()
}

#[test]
fn gitleaks_rules_compile_except_the_skipped_ones() {
    let cat = &*gitleaks::CATALOGUE;
    assert!(cat.rules.len() >= 200, "{} rules", cat.rules.len());
    assert_eq!(cat.source.commit.len(), 40);
    assert_eq!(cat.source.sha256.len(), 64);
    assert!(!cat.source.version.is_empty());
    let failing: Vec<&str> = cat
        .rules
        .iter()
        .filter(|r| gitleaks::compile_go(&r.pattern).is_err())
        .map(|r| r.id.as_str())
        .collect();
    assert_eq!(
        failing,
        gitleaks::SKIPPED,
        "rules Rust's regex cannot compile"
    );
    for (id, _) in gitleaks::LEFT_OUT {
        let rule = cat.rules.iter().find(|r| r.id == *id);
        assert!(rule.is_some_and(|r| !r.runs), "{id}");
    }
    for (id, regex, _) in gitleaks::NARROWED {
        assert!(cat.rules.iter().any(|r| r.id == *id), "{id}");
        assert!(gitleaks::compile_go(regex).is_ok(), "{id}");
    }
    let runs = cat.rules.iter().filter(|r| r.runs).count();
    eprintln!(
        "gitleaks {}: {} rules, {} run, {} left out, {} skipped",
        cat.source.version,
        cat.rules.len(),
        runs - gitleaks::SKIPPED.len(),
        gitleaks::LEFT_OUT.len(),
        gitleaks::SKIPPED.len()
    );
}

/// Every gitleaks rule that runs finds the fake sample generated from its own regex
/// (`tests/fixtures/secrets/gitleaks-samples.txt`, written by `scripts/vendor-gitleaks`),
/// alone and through [`find`]: its keywords, entropy and allowlists are wired as gitleaks
/// wires them.
#[test]
fn every_gitleaks_rule_finds_its_sample() {
    let cat = &*gitleaks::CATALOGUE;
    let mut checked = 0;
    let mut missed = Vec::new();
    for line in include_str!("../../../tests/fixtures/secrets/gitleaks-samples.txt")
        .lines()
        .filter(|l| !l.starts_with('#'))
    {
        let (id, sample) = line.split_once('\t').expect("id, a tab, the sample");
        let rule = cat.rules.iter().find(|r| r.id == id).expect(id);
        if !rule.runs {
            continue;
        }
        checked += 1;
        if rule.first_finding(sample, gitleaks::global()).is_none() || find(sample).is_none() {
            missed.push((id, sample));
        }
    }
    let runs = cat.rules.iter().filter(|r| r.runs).count();
    eprintln!(
        "gitleaks rules finding their sample: {} of {runs}",
        checked - missed.len()
    );
    assert_eq!(checked, runs, "a rule without a sample");
    assert!(missed.is_empty(), "{missed:#?}");
}

/// gitleaks' `generic-api-key` against mem7's assignment rule on the ordinary catalogue:
/// the one kept must raise at most 1% false alarms.
#[test]
fn generic_assignment_rule_is_the_quieter_one() {
    let cat = &*gitleaks::CATALOGUE;
    let generic = cat
        .rules
        .iter()
        .find(|r| r.id == "generic-api-key")
        .expect("generic-api-key");
    let ordinary = ordinary_facts();
    let by_generic: Vec<&String> = ordinary
        .iter()
        .filter(|o| generic.first_finding(o, gitleaks::global()).is_some())
        .collect();
    let by_assignment: Vec<&String> = ordinary
        .iter()
        .filter(|o| find_assignment(o).is_some())
        .collect();
    eprintln!(
        "ordinary facts flagged: generic-api-key {} of {}, mem7's assignment rule {}: {by_generic:#?}",
        by_generic.len(),
        ordinary.len(),
        by_assignment.len()
    );
    // Measured: 0 and 4 of 815.
    assert_eq!(by_assignment.len(), 0, "{by_assignment:#?}");
    assert!(
        by_generic.len() > by_assignment.len(),
        "reconsider LEFT_OUT"
    );
}
