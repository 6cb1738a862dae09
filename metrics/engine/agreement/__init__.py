"""Agreement between annotators (issue 16), framework-free: spans (pairwise F1, Cohen's kappa and
Krippendorff's alpha on character labels) and attribute values (Cohen's kappa, Krippendorff's alpha,
percent agreement), each with a cluster-bootstrap interval over documents. See docs/agreement.md."""
