//! Orders the decision stages and returns a `Decision`.
