"""Technical glue shared by the apps: errors, key authentication, pagination, htmx helpers.

Nothing in here knows a business rule.
"""
