"""The annotations app's API views: one module per resource, one view class per URL."""
