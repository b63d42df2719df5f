"""MCP: agents reach their Memory through the Model Context Protocol at ``/mcp``.

Each tool parses its arguments with the REST input serializer, calls the same action as its REST
endpoint and shapes the result with the same presenter, so the two surfaces cannot drift apart.
"""
