"""The memory app's REST API: views, their base, the route table and the OpenAPI pieces."""
