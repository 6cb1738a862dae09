"""Keyset (cursor) pagination: stable pages over large tables, at the same cost on page 1 and page 10,000."""

from rest_framework.pagination import CursorPagination


class KeysetPagination(CursorPagination):
    """Pages ordered by primary key; `?page_size=` up to 1,000."""

    ordering = "id"
    page_size = 100
    page_size_query_param = "page_size"
    max_page_size = 1000
