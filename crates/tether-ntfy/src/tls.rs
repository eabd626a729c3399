//! TLS without a process-global crypto provider (the approach of `tether-telegram`'s `tls`).
//!
//! reqwest is built with `rustls-no-provider`, so it would look for a globally installed
//! provider and panic without one. A finished `ClientConfig` naming ring avoids both.

use std::sync::Arc;

use rustls::ClientConfig;
use rustls::crypto::ring;

/// The platform verifier for `https`; for plain `http` (never handshakes) an empty root store.
pub(crate) fn client_config(https: bool) -> Result<ClientConfig, String> {
    let provider = Arc::new(ring::default_provider());
    let builder = ClientConfig::builder_with_provider(Arc::clone(&provider))
        .with_safe_default_protocol_versions()
        .map_err(|err| format!("cannot set up TLS: {err}"))?;
    let mut config = if https {
        let verifier = rustls_platform_verifier::Verifier::new(provider)
            .map_err(|err| format!("cannot set up TLS: {err}"))?;
        builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(verifier))
            .with_no_client_auth()
    } else {
        builder
            .with_root_certificates(rustls::RootCertStore::empty())
            .with_no_client_auth()
    };
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(config)
}
