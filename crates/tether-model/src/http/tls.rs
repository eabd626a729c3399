//! TLS for model endpoints without a process-global crypto provider.
//!
//! reqwest is built with `rustls-no-provider` (aws-lc is heavy to build), so it would look for a
//! globally installed provider — and panic if there is none. Handing it a finished
//! `ClientConfig` that names the ring provider explicitly avoids both the global and the panic.

use std::sync::Arc;

use rustls::ClientConfig;
use rustls::crypto::ring;

use crate::ModelError;

/// A TLS configuration: the platform verifier (system roots) for `https` endpoints; for plain
/// `http` endpoints, which never handshake, an empty root store so no certificates are read.
pub(super) fn client_config(https: bool) -> Result<ClientConfig, ModelError> {
    let provider = Arc::new(ring::default_provider());
    let builder = ClientConfig::builder_with_provider(Arc::clone(&provider))
        .with_safe_default_protocol_versions()
        .map_err(|err| tls_error(&err))?;
    let mut config = if https {
        let verifier =
            rustls_platform_verifier::Verifier::new(provider).map_err(|err| tls_error(&err))?;
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

fn tls_error(err: &rustls::Error) -> ModelError {
    ModelError::Config {
        detail: format!("cannot set up TLS: {err}"),
    }
}
