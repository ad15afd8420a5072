//! The canonical request arrives from any adapter or HTTP client: parsing,
//! validation and hashing must never panic, and an accepted request hashes
//! the same after a round trip through its own JSON.
#![no_main]

use libfuzzer_sys::fuzz_target;
use vouch::request::Request;

fuzz_target!(|data: &[u8]| {
    let Ok(request) = Request::from_slice(data) else {
        return;
    };
    if request.validate().is_err() {
        return;
    }
    let hash = request.request_hash();
    let _ = request.action_value();
    let _ = request.turn();
    let again = serde_json::to_vec(&request).map(|b| Request::from_slice(&b));
    if let Ok(Ok(again)) = again {
        assert_eq!(
            again.request_hash(),
            hash,
            "request_hash changed across a JSON round trip"
        );
    }
});
