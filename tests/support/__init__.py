"""Helpers the tests share: reference implementations, process utilities, repository paths."""
