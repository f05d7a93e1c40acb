namespace dpb {}
