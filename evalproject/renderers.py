"""The JSON renderer of every API answer (REST_FRAMEWORK["DEFAULT_RENDERER_CLASSES"])."""

from __future__ import annotations

from rest_framework.renderers import JSONRenderer


class JSONAnswerRenderer(JSONRenderer):
    """DRF's renderer (UTF-8, non-ASCII as is), which escapes as \\uXXXX an answer that UTF-8 cannot
    encode: an error message that quotes a lone surrogate from the request must not become a 500."""

    def render(self, data, accepted_media_type=None, renderer_context=None) -> bytes:
        try:
            return super().render(data, accepted_media_type, renderer_context)
        except UnicodeEncodeError:
            self.ensure_ascii = True
            return super().render(data, accepted_media_type, renderer_context)
