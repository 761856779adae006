//! A `postgres://` URL that never shows its password.

use std::fmt;
use std::str::FromStr as _;

use sqlx::postgres::PgConnectOptions;
use url::Url;

/// What a password is shown as.
const HIDDEN: &str = "***";

/// `--database postgres://USER:PASSWORD@HOST:PORT/DATABASE?PARAMETERS`
/// (or `postgresql://`). It shows itself (`Display`, `Debug`) with the
/// password as `***`, so it may go into logs and error messages; the
/// password itself only goes to the connection.
#[derive(Clone, PartialEq, Eq)]
pub struct PostgresUrl {
    url: String,
    shown: String,
}

/// Why a `postgres://` URL cannot be used; says nothing of its password.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct InvalidUrl(String);

impl PostgresUrl {
    /// Checks `text` as the PostgreSQL driver will read it when connecting.
    pub fn parse(text: &str) -> Result<PostgresUrl, InvalidUrl> {
        let shown = redact(text)?;
        PgConnectOptions::from_str(text).map_err(|e| InvalidUrl(format!("{shown}: {e}")))?;
        Ok(PostgresUrl {
            url: text.to_owned(),
            shown,
        })
    }

    /// How to connect: the URL's settings, with what libpq's environment
    /// variables (PGPASSWORD, PGSSLMODE, …) and `~/.pgpass` add to them.
    pub fn connect_options(&self) -> Result<PgConnectOptions, InvalidUrl> {
        PgConnectOptions::from_str(&self.url).map_err(|e| InvalidUrl(format!("{self}: {e}")))
    }
}

impl std::str::FromStr for PostgresUrl {
    type Err = InvalidUrl;

    fn from_str(text: &str) -> Result<PostgresUrl, InvalidUrl> {
        PostgresUrl::parse(text)
    }
}

impl fmt::Display for PostgresUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.shown)
    }
}

impl fmt::Debug for PostgresUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("PostgresUrl").field(&self.shown).finish()
    }
}

/// `text` with its password, in the user part or as the `password`
/// parameter, replaced by [`HIDDEN`].
fn redact(text: &str) -> Result<String, InvalidUrl> {
    // The parser's errors name what is wrong, never the text.
    let mut url = Url::parse(text).map_err(|e| InvalidUrl(format!("not a URL ({e})")))?;
    if url.password().is_some() {
        url.set_password(Some(HIDDEN))
            .map_err(|()| InvalidUrl("a URL whose password cannot be hidden".into()))?;
    }
    if url.query_pairs().any(|(key, _)| key == "password") {
        let pairs: Vec<(String, String)> = url
            .query_pairs()
            .map(|(key, value)| {
                let value = if key == "password" {
                    HIDDEN.to_owned()
                } else {
                    value.into_owned()
                };
                (key.into_owned(), value)
            })
            .collect();
        url.query_pairs_mut().clear().extend_pairs(pairs);
    }
    Ok(url.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_password_is_never_shown() {
        for (text, shown) in [
            (
                "postgres://engram:s3cret@db.internal:5432/engram",
                "postgres://engram:***@db.internal:5432/engram",
            ),
            (
                "postgresql://engram@db/engram?password=s3cret&sslmode=require",
                "postgresql://engram@db/engram?password=***&sslmode=require",
            ),
            ("postgres://engram@db/engram", "postgres://engram@db/engram"),
        ] {
            let url = PostgresUrl::parse(text).unwrap();
            assert_eq!(url.to_string(), shown);
            assert!(!format!("{url:?}").contains("s3cret"), "{url:?}");
        }
    }

    #[test]
    fn an_unusable_url_is_refused_without_its_password() {
        for text in [
            "postgres://engram:s3cret@db:notaport/engram",
            "postgres://engram:s3cret@db/engram?sslmode=sometimes",
        ] {
            let error = PostgresUrl::parse(text).unwrap_err().to_string();
            assert!(!error.contains("s3cret"), "{error}");
        }
    }

    #[test]
    fn connecting_uses_what_the_url_says() {
        let url = PostgresUrl::parse("postgres://engram:s3cret@db:6543/memories").unwrap();
        let options = url.connect_options().unwrap();
        assert_eq!(options.get_host(), "db");
        assert_eq!(options.get_port(), 6543);
        assert_eq!(options.get_database(), Some("memories"));
        assert_eq!(options.get_username(), "engram");
        // The password cannot be read back: the tests of the schema, which
        // connect with one, show that it is used.
    }
}
