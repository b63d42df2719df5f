"""`manage.py evaluate` files proposals in its throwaway Memories: nobody is told of them."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group, User
from django.core.management import call_command

from proposals.models import Proposal
from review.models import Notification


@pytest.mark.django_db(transaction=True)
def test_reviewers_are_not_mailed_about_the_evaluation_proposals():
    rita = User.objects.create_user("rita", email="rita@example.com", password="x")
    rita.groups.add(Group.objects.create(name="reviewer"))
    call_command("evaluate", "injection", "--quick")
    assert Proposal.objects.filter(memory__slug__startswith="eval-").exists()
    assert not Notification.objects.exists()
