//! The console's page, script and style, compiled into the binary: the
//! console needs nothing from the network, and nothing a user can edit is
//! served from here.
//!
//! Only two values are ever put into the HTML, both by this module: the
//! session's CSRF token (base64url, so it cannot break out of the
//! attribute) and one of the login page's fixed error sentences.

const APP_HTML: &str = include_str!("assets/app.html");
const LOGIN_HTML: &str = include_str!("assets/login.html");
const SCRIPT: &str = include_str!("assets/console.js");
const STYLE: &str = include_str!("assets/console.css");

/// Where the CSRF token goes in `app.html`.
const CSRF_SLOT: &str = "{{csrf}}";
/// Where the login page's error goes in `login.html`.
const ERROR_SLOT: &str = "<!--error-->";

/// The console page for a session with this CSRF token.
pub fn app_page(csrf: &str) -> String {
    // INVARIANT: `csrf` is base64url (store::mint_token), never markup.
    let safe: String = csrf
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
        .collect();
    APP_HTML.replace(CSRF_SLOT, &safe)
}

/// The login page, with one of the fixed messages of `console::login`.
pub fn login_page(error: Option<&'static str>) -> String {
    match error {
        Some(message) => LOGIN_HTML.replace(
            ERROR_SLOT,
            &format!("<p class=\"error\" role=\"alert\">{message}</p>"),
        ),
        None => LOGIN_HTML.to_owned(),
    }
}

/// An asset by file name: its content type and bytes.
pub fn get(name: &str) -> Option<(&'static str, &'static str)> {
    match name {
        "console.js" => Some(("text/javascript; charset=utf-8", SCRIPT)),
        "console.css" => Some(("text/css; charset=utf-8", STYLE)),
        _ => None,
    }
}
