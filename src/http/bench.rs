//! `servebench bench`: drive an OpenAI-compatible server with a load profile.
