//! TLS without a process-global crypto provider.
//!
//! reqwest is built with `rustls-no-provider` (aws-lc is heavy to build), so it would look for a
//! globally installed provider — and panic if there is none. Handing it a finished
//! `ClientConfig` that names the ring provider explicitly avoids both the global and the panic.
//! One function, so every client verifies certificates the same way.

use std::sync::Arc;

use rustls::ClientConfig;
use rustls::crypto::ring;

/// TLS could not be set up (the protocol versions, or the platform's certificate verifier).
#[derive(Debug, thiserror::Error)]
#[error("cannot set up TLS: {0}")]
pub struct TlsError(String);

/// A TLS configuration: the platform verifier (system roots) for `https`; for plain `http`,
/// which never handshakes, an empty root store so no certificates are read.
pub fn client_config(https: bool) -> Result<ClientConfig, TlsError> {
    let provider = Arc::new(ring::default_provider());
    let builder = ClientConfig::builder_with_provider(Arc::clone(&provider))
        .with_safe_default_protocol_versions()
        .map_err(|err| TlsError(err.to_string()))?;
    let mut config = if https {
        let verifier = rustls_platform_verifier::Verifier::new(provider)
            .map_err(|err| TlsError(err.to_string()))?;
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
