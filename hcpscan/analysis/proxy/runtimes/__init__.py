"""One module per client; each knows how that client reads NO_PROXY."""
