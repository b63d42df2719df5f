"""API routes of the exposure ledger (mounted under /api/v1/)."""

from lib.urls import under

from . import api

urlpatterns = under("memories/<slug:slug>", ("/exposures", api.ExposureListApi, "memory-exposures"))
