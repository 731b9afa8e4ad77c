//! placeholder, replaced below
