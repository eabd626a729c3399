//! TLS for model endpoints: tether-tls's configuration, its failure as a [`ModelError`].

use rustls::ClientConfig;

use crate::ModelError;

/// The shared TLS configuration (see `tether_http::client_config`).
pub(super) fn client_config(https: bool) -> Result<ClientConfig, ModelError> {
    tether_http::client_config(https).map_err(|err| ModelError::Config {
        detail: err.to_string(),
    })
}
