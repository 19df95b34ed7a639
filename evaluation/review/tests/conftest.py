import pytest

from evaluation.review.roles import setup_roles
from evaluation.review.tests import factories


@pytest.fixture
def roles(db):
    setup_roles()


@pytest.fixture
def superuser(db):
    return factories.user(superuser=True)


@pytest.fixture
def auditor(roles):
    return factories.user(groups=("auditor",))


@pytest.fixture
def researcher(roles):
    return factories.user(groups=("researcher",))


@pytest.fixture
def admin_client_for(client):
    def login(user):
        client.force_login(user)
        return client

    return login
