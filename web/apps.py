from django.apps import AppConfig


class WebConfig(AppConfig):
    """The pages for people: projects, runs, documents and comparisons, over the API's selectors."""

    name = "web"
    verbose_name = "Web pages"
