//! The seam between vouch's state code and its database: one transaction
//! type, one row type and one value type that both backends serve, so every
//! statement of the state and the audit is written once.
//!
//! The SQL itself is the common dialect of SQLite and PostgreSQL: `?N`
//! placeholders (rewritten to `$N` for PostgreSQL when first prepared),
//! `INSERT … ON CONFLICT`, `RETURNING`, row values, `CAST(… AS BIGINT)`.
//! Every integer column is a 64-bit integer on both sides and every flag an
//! integer 0/1, so a value reads back the same whichever backend stored it.

use std::cell::RefCell;
use std::collections::HashMap;
use std::error::Error as StdError;

use postgres::types::{IsNull, ToSql, Type, to_sql_checked};

/// What a statement of this module fails with.
#[derive(Debug, thiserror::Error)]
pub enum DbError {
    #[error(transparent)]
    Sqlite(#[from] rusqlite::Error),
    /// The server's message is shown, never its detail (which may quote
    /// a row's values).
    #[error("{0}{message}", message = pg_message(.0))]
    Postgres(#[from] postgres::Error),
    /// A column held a value its reader does not accept (the schema's
    /// checks make it unreachable); never replaced by a default.
    #[error("column {column} holds an unexpected value `{value}`")]
    BadValue { column: usize, value: String },
    /// A statement that should return a row returned none.
    #[error("the statement returned no row")]
    NoRow,
}

/// `: <message> (SQLSTATE <code>)` of an error the server reported.
fn pg_message(e: &postgres::Error) -> String {
    e.as_db_error()
        .map(|db| format!(": {} (SQLSTATE {})", db.message(), db.code().code()))
        .unwrap_or_default()
}

/// The result of a statement.
pub type DbResult<T> = Result<T, DbError>;

/// A statement parameter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Value<'a> {
    Int(i64),
    Text(&'a str),
    /// Raw bytes: SQLite's `BLOB`, PostgreSQL's `BYTEA`.
    Blob(&'a [u8]),
    Null,
}

/// Something that binds as one [`Value`].
pub trait Param {
    fn value(&self) -> Value<'_>;
}

impl Param for i64 {
    fn value(&self) -> Value<'_> {
        Value::Int(*self)
    }
}

impl Param for u32 {
    fn value(&self) -> Value<'_> {
        Value::Int(i64::from(*self))
    }
}

impl Param for i32 {
    fn value(&self) -> Value<'_> {
        Value::Int(i64::from(*self))
    }
}

impl Param for bool {
    fn value(&self) -> Value<'_> {
        Value::Int(i64::from(*self))
    }
}

impl Param for str {
    fn value(&self) -> Value<'_> {
        Value::Text(self)
    }
}

impl Param for String {
    fn value(&self) -> Value<'_> {
        Value::Text(self)
    }
}

impl Param for [u8] {
    fn value(&self) -> Value<'_> {
        Value::Blob(self)
    }
}

impl Param for Vec<u8> {
    fn value(&self) -> Value<'_> {
        Value::Blob(self)
    }
}

impl<T: Param + ?Sized> Param for &T {
    fn value(&self) -> Value<'_> {
        (**self).value()
    }
}

impl<T: Param> Param for Option<T> {
    fn value(&self) -> Value<'_> {
        match self {
            Some(v) => v.value(),
            None => Value::Null,
        }
    }
}

/// The parameters of one statement, in `?1`, `?2`, … order.
#[macro_export]
macro_rules! sql_params {
    () => { &[] as &[&dyn $crate::store::sql::Param] };
    ($($p:expr),+ $(,)?) => { &[$(&$p as &dyn $crate::store::sql::Param),+] as &[&dyn $crate::store::sql::Param] };
}
pub use sql_params as params;

impl rusqlite::ToSql for Value<'_> {
    fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
        use rusqlite::types::{ToSqlOutput, ValueRef};
        Ok(match *self {
            Value::Int(v) => ToSqlOutput::Borrowed(ValueRef::Integer(v)),
            Value::Text(s) => ToSqlOutput::Borrowed(ValueRef::Text(s.as_bytes())),
            Value::Blob(b) => ToSqlOutput::Borrowed(ValueRef::Blob(b)),
            Value::Null => ToSqlOutput::Borrowed(ValueRef::Null),
        })
    }
}

/// A [`Value`] as PostgreSQL binds it: an integer is encoded as whatever
/// integer type the server inferred for the placeholder (a value out of its
/// range is an error, never wrapped).
#[derive(Debug)]
struct PgValue<'a>(Value<'a>);

impl ToSql for PgValue<'_> {
    fn to_sql(
        &self,
        ty: &Type,
        out: &mut bytes::BytesMut,
    ) -> Result<IsNull, Box<dyn StdError + Sync + Send>> {
        match self.0 {
            Value::Null => Ok(IsNull::Yes),
            Value::Text(s) => s.to_sql(ty, out),
            Value::Blob(b) => b.to_sql(ty, out),
            Value::Int(v) => match *ty {
                Type::INT8 => v.to_sql(ty, out),
                Type::INT4 => i32::try_from(v)?.to_sql(ty, out),
                Type::INT2 => i16::try_from(v)?.to_sql(ty, out),
                Type::BOOL => (v != 0).to_sql(ty, out),
                _ => Err(format!("an integer cannot bind as {ty}").into()),
            },
        }
    }

    fn accepts(_ty: &Type) -> bool {
        true
    }

    to_sql_checked!();
}

/// One row of a result.
pub struct Row<'r>(RowRef<'r>);

enum RowRef<'r> {
    Sqlite(&'r rusqlite::Row<'r>),
    Postgres(&'r postgres::Row),
}

impl Row<'_> {
    /// Column `idx`, read as `T`.
    pub fn get<T: Column>(&self, idx: usize) -> DbResult<T> {
        match &self.0 {
            RowRef::Sqlite(row) => T::from_sqlite(row, idx),
            RowRef::Postgres(row) => T::from_postgres(row, idx),
        }
    }

    /// Text column `idx`, borrowed from the row (no allocation: for
    /// readers of many rows whose text repeats a handful of values).
    pub fn text(&self, idx: usize) -> DbResult<&str> {
        match &self.0 {
            RowRef::Sqlite(row) => row.get_ref(idx)?.as_str().map_err(|e| {
                DbError::Sqlite(rusqlite::Error::FromSqlConversionFailure(
                    idx,
                    rusqlite::types::Type::Text,
                    Box::new(e),
                ))
            }),
            RowRef::Postgres(row) => Ok(row.try_get(idx)?),
        }
    }
}

/// A type a column reads as.
pub trait Column: Sized {
    fn from_sqlite(row: &rusqlite::Row<'_>, idx: usize) -> DbResult<Self>;
    fn from_postgres(row: &postgres::Row, idx: usize) -> DbResult<Self>;
}

/// An integer column of PostgreSQL, whatever its width.
fn pg_int(row: &postgres::Row, idx: usize) -> DbResult<Option<i64>> {
    let ty = row.columns().get(idx).map(|c| c.type_().clone());
    Ok(match ty {
        Some(Type::INT4) => row.try_get::<_, Option<i32>>(idx)?.map(i64::from),
        Some(Type::INT2) => row.try_get::<_, Option<i16>>(idx)?.map(i64::from),
        Some(Type::BOOL) => row.try_get::<_, Option<bool>>(idx)?.map(i64::from),
        _ => row.try_get::<_, Option<i64>>(idx)?,
    })
}

impl Column for Option<i64> {
    fn from_sqlite(row: &rusqlite::Row<'_>, idx: usize) -> DbResult<Self> {
        Ok(row.get(idx)?)
    }
    fn from_postgres(row: &postgres::Row, idx: usize) -> DbResult<Self> {
        pg_int(row, idx)
    }
}

impl Column for i64 {
    fn from_sqlite(row: &rusqlite::Row<'_>, idx: usize) -> DbResult<Self> {
        Ok(row.get(idx)?)
    }
    fn from_postgres(row: &postgres::Row, idx: usize) -> DbResult<Self> {
        pg_int(row, idx)?.ok_or(DbError::BadValue {
            column: idx,
            value: "NULL".to_owned(),
        })
    }
}

impl Column for u32 {
    fn from_sqlite(row: &rusqlite::Row<'_>, idx: usize) -> DbResult<Self> {
        Ok(row.get(idx)?)
    }
    fn from_postgres(row: &postgres::Row, idx: usize) -> DbResult<Self> {
        let v = i64::from_postgres(row, idx)?;
        u32::try_from(v).map_err(|_| DbError::BadValue {
            column: idx,
            value: v.to_string(),
        })
    }
}

impl Column for bool {
    fn from_sqlite(row: &rusqlite::Row<'_>, idx: usize) -> DbResult<Self> {
        Ok(row.get(idx)?)
    }
    fn from_postgres(row: &postgres::Row, idx: usize) -> DbResult<Self> {
        Ok(i64::from_postgres(row, idx)? != 0)
    }
}

impl Column for String {
    fn from_sqlite(row: &rusqlite::Row<'_>, idx: usize) -> DbResult<Self> {
        Ok(row.get(idx)?)
    }
    fn from_postgres(row: &postgres::Row, idx: usize) -> DbResult<Self> {
        Ok(row.try_get(idx)?)
    }
}

impl Column for Option<String> {
    fn from_sqlite(row: &rusqlite::Row<'_>, idx: usize) -> DbResult<Self> {
        Ok(row.get(idx)?)
    }
    fn from_postgres(row: &postgres::Row, idx: usize) -> DbResult<Self> {
        Ok(row.try_get(idx)?)
    }
}

/// A PostgreSQL connection and the statements prepared on it, keyed by
/// their text as written (with `?N` placeholders).
pub struct PgConn {
    pub(crate) client: postgres::Client,
    statements: HashMap<String, postgres::Statement>,
}

/// Statements kept prepared per PostgreSQL connection; past this the cache
/// is cleared (vouch runs about a hundred distinct statements).
const PG_STATEMENT_CACHE: usize = 512;

impl PgConn {
    pub(crate) fn new(client: postgres::Client) -> PgConn {
        PgConn {
            client,
            statements: HashMap::new(),
        }
    }

    fn prepared(&mut self, sql: &str) -> DbResult<postgres::Statement> {
        if let Some(statement) = self.statements.get(sql) {
            return Ok(statement.clone());
        }
        let statement = self.client.prepare(&dollar_placeholders(sql))?;
        if self.statements.len() >= PG_STATEMENT_CACHE {
            self.statements.clear();
        }
        self.statements.insert(sql.to_owned(), statement.clone());
        Ok(statement)
    }

    fn run(&mut self, sql: &str, params: &[&dyn Param]) -> DbResult<Vec<postgres::Row>> {
        let statement = self.prepared(sql)?;
        let values: Vec<PgValue<'_>> = params.iter().map(|p| PgValue(p.value())).collect();
        let refs: Vec<&(dyn ToSql + Sync)> =
            values.iter().map(|v| v as &(dyn ToSql + Sync)).collect();
        Ok(self.client.query(&statement, &refs)?)
    }

    fn execute(&mut self, sql: &str, params: &[&dyn Param]) -> DbResult<usize> {
        let statement = self.prepared(sql)?;
        let values: Vec<PgValue<'_>> = params.iter().map(|p| PgValue(p.value())).collect();
        let refs: Vec<&(dyn ToSql + Sync)> =
            values.iter().map(|v| v as &(dyn ToSql + Sync)).collect();
        let n = self.client.execute(&statement, &refs)?;
        Ok(usize::try_from(n).unwrap_or(usize::MAX))
    }
}

/// `?N` placeholders as PostgreSQL's `$N`, outside quoted text.
pub(crate) fn dollar_placeholders(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len());
    let mut quote: Option<char> = None;
    let mut chars = sql.chars().peekable();
    while let Some(c) = chars.next() {
        match quote {
            Some(q) => {
                if c == q {
                    quote = None;
                }
                out.push(c);
            }
            None if c == '\'' || c == '"' => {
                quote = Some(c);
                out.push(c);
            }
            None if c == '?' && chars.peek().is_some_and(char::is_ascii_digit) => out.push('$'),
            None => out.push(c),
        }
    }
    out
}

/// An open transaction: what `Store::write` and `Store::read` hand their
/// closure. Its statements are prepared once per connection.
pub struct Transaction<'c>(TxConn<'c>);

enum TxConn<'c> {
    Sqlite(&'c rusqlite::Connection),
    Postgres(RefCell<&'c mut PgConn>),
}

impl<'c> Transaction<'c> {
    pub(crate) fn sqlite(conn: &'c rusqlite::Connection) -> Transaction<'c> {
        Transaction(TxConn::Sqlite(conn))
    }

    pub(crate) fn postgres(conn: &'c mut PgConn) -> Transaction<'c> {
        Transaction(TxConn::Postgres(RefCell::new(conn)))
    }

    /// `sql` prepared (or taken from the connection's cache) once, for a
    /// statement a loop runs many times: each run then skips the cache
    /// lookup, which hashes the SQL text.
    pub fn prepare<'t>(&'t self, sql: &str) -> DbResult<Statement<'t, 'c>> {
        Ok(Statement(match &self.0 {
            TxConn::Sqlite(conn) => StatementOn::Sqlite(conn.prepare_cached(sql)?),
            TxConn::Postgres(conn) => {
                let statement = conn.borrow_mut().prepared(sql)?;
                StatementOn::Postgres { conn, statement }
            }
        }))
    }

    /// Runs a statement that returns no rows; how many rows it changed.
    pub fn execute(&self, sql: &str, params: &[&dyn Param]) -> DbResult<usize> {
        match &self.0 {
            TxConn::Sqlite(conn) => {
                let values = params.iter().map(|p| p.value());
                Ok(conn
                    .prepare_cached(sql)?
                    .execute(rusqlite::params_from_iter(values))?)
            }
            TxConn::Postgres(conn) => conn.borrow_mut().execute(sql, params),
        }
    }

    /// The first row's value, or `None` when there is no row.
    pub fn query_opt<T>(
        &self,
        sql: &str,
        params: &[&dyn Param],
        f: impl FnOnce(&Row<'_>) -> DbResult<T>,
    ) -> DbResult<Option<T>> {
        match &self.0 {
            TxConn::Sqlite(conn) => {
                let mut stmt = conn.prepare_cached(sql)?;
                let mut rows =
                    stmt.query(rusqlite::params_from_iter(params.iter().map(|p| p.value())))?;
                match rows.next()? {
                    Some(row) => f(&Row(RowRef::Sqlite(row))).map(Some),
                    None => Ok(None),
                }
            }
            TxConn::Postgres(conn) => {
                let rows = conn.borrow_mut().run(sql, params)?;
                match rows.first() {
                    Some(row) => f(&Row(RowRef::Postgres(row))).map(Some),
                    None => Ok(None),
                }
            }
        }
    }

    /// The first row's value; no row is [`DbError::NoRow`].
    pub fn query_one<T>(
        &self,
        sql: &str,
        params: &[&dyn Param],
        f: impl FnOnce(&Row<'_>) -> DbResult<T>,
    ) -> DbResult<T> {
        self.query_opt(sql, params, f)?.ok_or(DbError::NoRow)
    }

    /// Every row's value, in order.
    pub fn query_all<T>(
        &self,
        sql: &str,
        params: &[&dyn Param],
        mut f: impl FnMut(&Row<'_>) -> DbResult<T>,
    ) -> DbResult<Vec<T>> {
        match &self.0 {
            TxConn::Sqlite(conn) => {
                let mut stmt = conn.prepare_cached(sql)?;
                let mut rows =
                    stmt.query(rusqlite::params_from_iter(params.iter().map(|p| p.value())))?;
                let mut out = Vec::new();
                while let Some(row) = rows.next()? {
                    out.push(f(&Row(RowRef::Sqlite(row)))?);
                }
                Ok(out)
            }
            TxConn::Postgres(conn) => {
                let rows = conn.borrow_mut().run(sql, params)?;
                rows.iter()
                    .map(|row| f(&Row(RowRef::Postgres(row))))
                    .collect()
            }
        }
    }
}

/// A statement prepared for one transaction ([`Transaction::prepare`]).
pub struct Statement<'t, 'c>(StatementOn<'t, 'c>);

enum StatementOn<'t, 'c> {
    Sqlite(rusqlite::CachedStatement<'c>),
    Postgres {
        conn: &'t RefCell<&'c mut PgConn>,
        statement: postgres::Statement,
    },
}

impl Statement<'_, '_> {
    /// Runs it; how many rows it changed.
    pub fn execute(&mut self, params: &[&dyn Param]) -> DbResult<usize> {
        match &mut self.0 {
            StatementOn::Sqlite(statement) => {
                Ok(statement
                    .execute(rusqlite::params_from_iter(params.iter().map(|p| p.value())))?)
            }
            StatementOn::Postgres { conn, statement } => {
                let values: Vec<PgValue<'_>> = params.iter().map(|p| PgValue(p.value())).collect();
                let refs: Vec<&(dyn ToSql + Sync)> =
                    values.iter().map(|v| v as &(dyn ToSql + Sync)).collect();
                let n = conn.borrow_mut().client.execute(&*statement, &refs)?;
                Ok(usize::try_from(n).unwrap_or(usize::MAX))
            }
        }
    }

    /// Runs it; the first row's value, or `None` when there is no row.
    pub fn query_opt<T>(
        &mut self,
        params: &[&dyn Param],
        f: impl FnOnce(&Row<'_>) -> DbResult<T>,
    ) -> DbResult<Option<T>> {
        match &mut self.0 {
            StatementOn::Sqlite(statement) => {
                let mut rows = statement
                    .query(rusqlite::params_from_iter(params.iter().map(|p| p.value())))?;
                match rows.next()? {
                    Some(row) => f(&Row(RowRef::Sqlite(row))).map(Some),
                    None => Ok(None),
                }
            }
            StatementOn::Postgres { conn, statement } => {
                let values: Vec<PgValue<'_>> = params.iter().map(|p| PgValue(p.value())).collect();
                let refs: Vec<&(dyn ToSql + Sync)> =
                    values.iter().map(|v| v as &(dyn ToSql + Sync)).collect();
                let rows = conn.borrow_mut().client.query(&*statement, &refs)?;
                match rows.first() {
                    Some(row) => f(&Row(RowRef::Postgres(row))).map(Some),
                    None => Ok(None),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::dollar_placeholders;

    #[test]
    fn placeholders_become_dollars_outside_quotes() {
        assert_eq!(
            dollar_placeholders("SELECT a FROM t WHERE b = ?1 AND c = '?2' AND d = ?12"),
            "SELECT a FROM t WHERE b = $1 AND c = '?2' AND d = $12"
        );
        assert_eq!(dollar_placeholders("SELECT '?' || ?"), "SELECT '?' || ?");
    }
}
