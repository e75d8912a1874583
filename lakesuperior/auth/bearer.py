"""Bearer tokens: ``Authorization: Bearer <JWT>`` (RFC 6750, RFC 7519), as
Islandora's Syn sends them to Fedora.

A token is believed when its signature verifies with the configured key
(``auth.jwt.key`` or ``auth.jwt.key_file``) under the one configured algorithm
(HS256/384/512 with a shared secret, RS256/384/512 with a PEM public key), it
carries an ``exp`` that has not passed (and ``iss`` / ``aud`` when they are
configured), and its user claim (``auth.jwt.user_claim``, ``sub``) names a user:
a user name, or an ``http(s)`` URI that is the WebID itself. The user is an
administrator when the role claim (``auth.jwt.role_claim``) holds
``auth.jwt.admin_role``. Anything else is ``BearerTokenError`` (401), whose
message says what is wrong without repeating the token. PyJWT verifies; the
algorithm list it is given holds only the configured one, so an unsigned token
(``alg: none``) or one signed with another algorithm is refused.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jwt
from jwt.algorithms import get_default_algorithms

from lakesuperior.auth.users import NAME
from lakesuperior.config import Config
from lakesuperior.exceptions import BearerTokenError, ConfigError

__all__ = ["BearerAuth", "TokenUser"]

_URI = re.compile(r"https?://[^\s<>\"{}|\\^`]+")
#: Shortest shared secret of each HMAC algorithm (RFC 7518 section 3.2: its hash size).
MIN_SECRET = {"HS256": 32, "HS384": 48, "HS512": 64}
#: Longest token looked at (a JWT of a few claims is a few hundred bytes).
MAX_TOKEN = 16384


@dataclass(frozen=True)
class TokenUser:
    """Who a verified token speaks for: ``name`` (a user name, or the WebID URI
    itself when ``is_webid``) and whether it is an administrator."""

    name: str
    admin: bool
    is_webid: bool = False


class BearerAuth:
    """The bearer-token check of one app (``enabled`` when a key is configured)."""

    def __init__(self, config: Config):
        key = config.auth_jwt_key
        if config.auth_jwt_key_file:
            try:
                key = Path(config.auth_jwt_key_file).read_text(encoding="utf-8").strip()
            except OSError as e:
                raise ConfigError(f"Cannot read auth.jwt.key_file "
                                  f"{config.auth_jwt_key_file}: {e.strerror}") from None
        self.algorithm = config.auth_jwt_algorithm
        self.user_claim = config.auth_jwt_user_claim
        self.role_claim = config.auth_jwt_role_claim
        self.admin_role = config.auth_jwt_admin_role
        self.issuer = config.auth_jwt_issuer or None
        self.audience = config.auth_jwt_audience or None
        self._key: Any = _prepared(key, self.algorithm) if key else None

    @property
    def enabled(self) -> bool:
        return self._key is not None

    def user(self, token: str) -> TokenUser:
        """The user of a bearer ``token``; ``BearerTokenError`` unless it is believed."""
        token = token.strip()
        if not token or len(token) > MAX_TOKEN:
            raise BearerTokenError("Malformed bearer token: empty or too long")
        try:
            claims = jwt.decode(
                token, self._key, algorithms=[self.algorithm], issuer=self.issuer,
                audience=self.audience,
                options={"require": ["exp"], "verify_aud": self.audience is not None})
        except jwt.ExpiredSignatureError:
            raise BearerTokenError("The bearer token has expired") from None
        except jwt.MissingRequiredClaimError as e:
            raise BearerTokenError(f"The bearer token has no {e.claim!r} claim") from None
        except jwt.InvalidAlgorithmError:
            raise BearerTokenError(f"The bearer token is not signed with {self.algorithm}, "
                                   "the one algorithm accepted") from None
        except jwt.InvalidSignatureError:
            raise BearerTokenError("The bearer token's signature does not verify") from None
        except (jwt.InvalidIssuerError, jwt.InvalidAudienceError):
            raise BearerTokenError("The bearer token is for another issuer or "
                                   "audience") from None
        except jwt.DecodeError:
            raise BearerTokenError("Malformed bearer token: not a signed JWT") from None
        except jwt.InvalidTokenError as e:
            raise BearerTokenError(f"Invalid bearer token ({type(e).__name__})") from None
        return self._user_of(claims)

    def _user_of(self, claims: dict[str, Any]) -> TokenUser:
        name = claims.get(self.user_claim)
        if not isinstance(name, str) or not name:
            raise BearerTokenError(f"The bearer token has no {self.user_claim!r} claim "
                                   "naming a user")
        roles = claims.get(self.role_claim) or []
        if isinstance(roles, str):
            roles = [roles]
        admin = bool(self.admin_role) and isinstance(roles, list) and self.admin_role in roles
        if _URI.fullmatch(name):
            return TokenUser(name, admin, is_webid=True)
        if not NAME.fullmatch(name):
            raise BearerTokenError(f"The bearer token's {self.user_claim!r} claim is not a "
                                   "user name or an http(s) WebID")
        return TokenUser(name, admin)


def _prepared(key: str, algorithm: str) -> Any:
    """The verification key of ``algorithm`` (``ConfigError`` for a key that cannot
    be one: an RS* key that is not a PEM public key, an HS* secret that is a PEM key
    or shorter than RFC 7518 section 3.2 asks)."""
    shortest = MIN_SECRET.get(algorithm)
    if shortest is not None and len(key.encode()) < shortest:
        raise ConfigError(f"auth.jwt.key is too short for {algorithm}: a shared secret of "
                          f"at least {shortest} bytes (RFC 7518 section 3.2)")
    try:
        return get_default_algorithms()[algorithm].prepare_key(key)
    except (jwt.InvalidKeyError, ValueError, TypeError) as e:
        kind = "a PEM public key" if algorithm.startswith("RS") else "a shared secret"
        raise ConfigError(f"auth.jwt.key is not {kind} for {algorithm} "
                          f"({type(e).__name__})") from None
