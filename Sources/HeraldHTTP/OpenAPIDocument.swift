import Hummingbird

/// The OpenAPI 3.0 description of Herald's HTTP API, served at `GET /openapi.json`.
///
/// It describes what app servers and app instances call: the request shapes, the
/// credentials each path takes and the answers, errors in FCM's shapes included.
/// `compat/test_hostile.py` checks that it names every route the router serves and
/// drives it with schemathesis, which must never see a 5xx answer.
enum OpenAPIDocument {
    static func register(on router: Router<HeraldRequestContext>) {
        router.get("/openapi.json") { _, _ in
            Response(
                status: .ok, headers: [.contentType: "application/json"],
                body: ResponseBody(byteBuffer: ByteBuffer(string: json)))
        }
    }

    static let json = #"""
        {
          "openapi": "3.0.3",
          "info": {
            "title": "Herald",
            "version": "1",
            "description": "Self-hosted cloud messaging with the HTTP surfaces of Firebase Cloud Messaging: the HTTP v1 send API, topic management (v1 resource and Instance ID), device groups, device registration and delivery data."
          },
          "servers": [{"url": "/"}],
          "components": {
            "securitySchemes": {
              "bearer": {"type": "http", "scheme": "bearer", "description": "An OAuth 2 access token from POST /token."},
              "serverKey": {"type": "apiKey", "in": "header", "name": "Authorization", "description": "key=SERVER_KEY (legacy APIs)."},
              "apiKey": {"type": "apiKey", "in": "header", "name": "x-goog-api-key", "description": "The project's API key (app instances)."},
              "androidLogin": {"type": "apiKey", "in": "header", "name": "Authorization", "description": "AidLogin ANDROID_ID:SECURITY_TOKEN from a check-in."},
              "vapid": {"type": "apiKey", "in": "header", "name": "Authorization", "description": "vapid t=JWT, k=KEY (RFC 8292), or WebPush JWT with Crypto-Key p256ecdsa=KEY."}
            },
            "parameters": {
              "project": {"name": "project", "in": "path", "required": true, "schema": {"type": "string"}, "description": "The project id."},
              "token": {"name": "token", "in": "path", "required": true, "schema": {"type": "string"}, "description": "A registration token."}
            },
            "schemas": {
              "Status": {
                "type": "object",
                "properties": {
                  "error": {
                    "type": "object",
                    "properties": {
                      "code": {"type": "integer"},
                      "message": {"type": "string"},
                      "status": {"type": "string"},
                      "details": {"type": "array", "items": {"type": "object"}}
                    }
                  }
                }
              },
              "LegacyError": {"type": "object", "properties": {"error": {"type": "string"}}},
              "StringMap": {"type": "object", "additionalProperties": {"type": "string"}},
              "Notification": {
                "type": "object",
                "properties": {"title": {"type": "string"}, "body": {"type": "string"}, "image": {"type": "string"}}
              },
              "AndroidConfig": {
                "type": "object",
                "properties": {
                  "collapse_key": {"type": "string"},
                  "priority": {"type": "string", "enum": ["normal", "high", "NORMAL", "HIGH"]},
                  "ttl": {"type": "string", "description": "Seconds with up to nine fractional digits and an s, e.g. 3.5s; at most 28 days."},
                  "restricted_package_name": {"type": "string"},
                  "data": {"$ref": "#/components/schemas/StringMap"},
                  "notification": {"type": "object"},
                  "fcm_options": {"type": "object", "properties": {"analytics_label": {"type": "string"}}},
                  "direct_boot_ok": {"type": "boolean"}
                }
              },
              "Message": {
                "type": "object",
                "description": "Exactly one of token, topic and condition.",
                "properties": {
                  "name": {"type": "string", "readOnly": true},
                  "token": {"type": "string"},
                  "topic": {"type": "string"},
                  "condition": {"type": "string"},
                  "data": {"$ref": "#/components/schemas/StringMap"},
                  "notification": {"$ref": "#/components/schemas/Notification"},
                  "android": {"$ref": "#/components/schemas/AndroidConfig"},
                  "webpush": {"type": "object"},
                  "apns": {"type": "object"},
                  "fcm_options": {"type": "object", "properties": {"analytics_label": {"type": "string"}}}
                }
              },
              "TopicSubscription": {
                "type": "object",
                "properties": {"name": {"type": "string"}, "createTime": {"type": "string"}}
              },
              "BatchRequest": {
                "type": "object",
                "required": ["to", "registration_tokens"],
                "properties": {
                  "to": {"type": "string", "description": "/topics/NAME"},
                  "registration_tokens": {"type": "array", "maxItems": 1000, "items": {"type": "string"}}
                }
              },
              "BatchResponse": {
                "type": "object",
                "properties": {
                  "results": {"type": "array", "items": {"type": "object", "properties": {"error": {"type": "string"}}}}
                }
              }
            },
            "responses": {
              "Error": {
                "description": "An error in FCM's shape (google.rpc.Status with an FcmError detail).",
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Status"}}}
              },
              "LegacyError": {
                "description": "An error of the legacy APIs.",
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/LegacyError"}}}
              }
            }
          },
          "paths": {
            "/v1/projects/{project}/messages:send": {
              "post": {
                "operationId": "send",
                "summary": "Send a message to a token, a topic or a condition.",
                "security": [{"bearer": []}],
                "parameters": [{"$ref": "#/components/parameters/project"}],
                "requestBody": {
                  "required": true,
                  "content": {
                    "application/json": {
                      "schema": {
                        "type": "object",
                        "required": ["message"],
                        "properties": {
                          "message": {"$ref": "#/components/schemas/Message"},
                          "validate_only": {"type": "boolean"}
                        }
                      }
                    }
                  }
                },
                "responses": {
                  "200": {
                    "description": "Accepted; the message's name.",
                    "content": {"application/json": {"schema": {"type": "object", "properties": {"name": {"type": "string"}}}}}
                  },
                  "default": {"$ref": "#/components/responses/Error"}
                }
              }
            },
            "/v1/projects/{project}/registrations/{token}/topicSubscriptions": {
              "parameters": [{"$ref": "#/components/parameters/project"}, {"$ref": "#/components/parameters/token"}],
              "post": {
                "operationId": "subscribe",
                "summary": "Subscribe a registration to a topic.",
                "security": [{"bearer": []}],
                "parameters": [{"name": "topic_name", "in": "query", "required": true, "schema": {"type": "string"}}],
                "responses": {
                  "200": {"description": "The subscription.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/TopicSubscription"}}}},
                  "default": {"$ref": "#/components/responses/Error"}
                }
              },
              "get": {
                "operationId": "listSubscriptions",
                "summary": "List a registration's topic subscriptions.",
                "security": [{"bearer": []}],
                "parameters": [
                  {"name": "pageSize", "in": "query", "schema": {"type": "integer", "minimum": 1, "maximum": 1000}},
                  {"name": "pageToken", "in": "query", "schema": {"type": "string"}}
                ],
                "responses": {
                  "200": {
                    "description": "A page of subscriptions.",
                    "content": {
                      "application/json": {
                        "schema": {
                          "type": "object",
                          "properties": {
                            "topicSubscriptions": {"type": "array", "items": {"$ref": "#/components/schemas/TopicSubscription"}},
                            "nextPageToken": {"type": "string"}
                          }
                        }
                      }
                    }
                  },
                  "default": {"$ref": "#/components/responses/Error"}
                }
              }
            },
            "/v1/projects/{project}/registrations/{token}/topicSubscriptions/{topic}": {
              "parameters": [
                {"$ref": "#/components/parameters/project"},
                {"$ref": "#/components/parameters/token"},
                {"name": "topic", "in": "path", "required": true, "schema": {"type": "string"}}
              ],
              "get": {
                "operationId": "getSubscription",
                "security": [{"bearer": []}],
                "responses": {
                  "200": {"description": "The subscription.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/TopicSubscription"}}}},
                  "default": {"$ref": "#/components/responses/Error"}
                }
              },
              "delete": {
                "operationId": "unsubscribe",
                "security": [{"bearer": []}],
                "parameters": [{"name": "allow_missing", "in": "query", "schema": {"type": "boolean"}}],
                "responses": {
                  "200": {"description": "Removed.", "content": {"application/json": {"schema": {"type": "object"}}}},
                  "default": {"$ref": "#/components/responses/Error"}
                }
              }
            },
            "/iid/v1:batchAdd": {
              "post": {
                "operationId": "batchAdd",
                "summary": "Subscribe up to 1,000 tokens to a topic; one result per token, in order.",
                "security": [{"bearer": []}, {"serverKey": []}],
                "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/BatchRequest"}}}},
                "responses": {
                  "200": {"description": "Per-token results.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/BatchResponse"}}}},
                  "default": {"$ref": "#/components/responses/LegacyError"}
                }
              }
            },
            "/iid/v1:batchRemove": {
              "post": {
                "operationId": "batchRemove",
                "summary": "Unsubscribe up to 1,000 tokens from a topic; one result per token, in order.",
                "security": [{"bearer": []}, {"serverKey": []}],
                "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/BatchRequest"}}}},
                "responses": {
                  "200": {"description": "Per-token results.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/BatchResponse"}}}},
                  "default": {"$ref": "#/components/responses/LegacyError"}
                }
              }
            },
            "/iid/v1:batchImport": {
              "post": {
                "operationId": "batchImport",
                "summary": "Registration tokens for up to 100 APNs device tokens of one app; the same token for a token imported again.",
                "security": [{"bearer": []}, {"serverKey": []}],
                "requestBody": {"required": true, "content": {"application/json": {"schema": {"type": "object", "required": ["application", "apns_tokens"], "properties": {"application": {"type": "string", "description": "The app's bundle id."}, "sandbox": {"type": "boolean"}, "apns_tokens": {"type": "array", "maxItems": 100, "items": {"type": "string"}}}}}}},
                "responses": {
                  "200": {"description": "One result per APNs token, in order.", "content": {"application/json": {"schema": {"type": "object", "properties": {"results": {"type": "array", "items": {"type": "object", "properties": {"apns_token": {"type": "string"}, "status": {"type": "string"}, "registration_token": {"type": "string"}}}}}}}}},
                  "default": {"$ref": "#/components/responses/Error"}
                }
              }
            },
            "/iid/info/{token}": {
              "get": {
                "operationId": "instanceInfo",
                "summary": "A token's application and, with details=true, its topics.",
                "security": [{"bearer": []}, {"serverKey": []}],
                "parameters": [
                  {"$ref": "#/components/parameters/token"},
                  {"name": "details", "in": "query", "schema": {"type": "boolean"}}
                ],
                "responses": {
                  "200": {"description": "The instance.", "content": {"application/json": {"schema": {"type": "object"}}}},
                  "default": {"$ref": "#/components/responses/LegacyError"}
                }
              }
            },
            "/fcm/send": {
                \#(legacySend(operationID: "legacySend", summary: "Send through the legacy HTTP protocol."))
            },
            "/gcm/send": {
                \#(legacySend(operationID: "legacySendGCM", summary: "The legacy HTTP protocol at its older path."))
            },
            "/wp/{token}": {
                \#(webPush(operationID: "webPush", summary: "Push a message to a push channel (RFC 8030), encrypted to its keys."))
              ,
              "get": {
                "operationId": "unifiedPushDiscovery",
                "summary": "UnifiedPush discovery: the unifiedpush version object for a live push channel.",
                "security": [],
                "parameters": [{"$ref": "#/components/parameters/token"}],
                "responses": {
                  "200": {"description": "The discovery answer.", "content": {"application/json": {"schema": {"type": "object"}}}},
                  "404": {"description": "No such push channel.", "content": {"text/plain": {"schema": {"type": "string"}}}},
                  "410": {"description": "The push channel was unsubscribed.", "content": {"text/plain": {"schema": {"type": "string"}}}}
                }
              }
            },
            "/fcm/send/{token}": {
                \#(webPush(operationID: "webPushBrowserEndpoint", summary: "The push endpoint as browsers report it."))
            },
            "/_matrix/push/v1/notify": {
              "post": {
                "operationId": "matrixNotify",
                "summary": "Matrix push gateway: forward a notification to the push channels its pushkeys name.",
                "security": [],
                "requestBody": {
                  "required": true,
                  "content": {"application/json": {"schema": {"type": "object", "required": ["notification"], "properties": {"notification": {"type": "object"}}}}}
                },
                "responses": {
                  "200": {"description": "The pushkeys to drop.", "content": {"application/json": {"schema": {"type": "object", "properties": {"rejected": {"type": "array", "items": {"type": "string"}}}}}}},
                  "400": {"description": "Not a notification.", "content": {"text/plain": {"schema": {"type": "string"}}}},
                  "413": {"description": "Larger than 4,096 bytes.", "content": {"text/plain": {"schema": {"type": "string"}}}}
                }
              },
              "get": {
                "operationId": "matrixGatewayDiscovery",
                "summary": "UnifiedPush discovery of the Matrix gateway.",
                "security": [],
                "responses": {"200": {"description": "The gateway answer.", "content": {"application/json": {"schema": {"type": "object"}}}}}
              }
            },
            "/wp/r/{subscription}": {
                \#(webPushReceipts)
            },
            "/wp/m/{token}/{message}": {
              "delete": {
                "operationId": "webPushWithdraw",
                "summary": "Withdraw a push message not yet delivered (RFC 8030 section 6.2).",
                "security": [],
                "parameters": [
                  {"$ref": "#/components/parameters/token"},
                  {"name": "message", "in": "path", "required": true, "schema": {"type": "string"}}
                ],
                "responses": {
                  "204": {"description": "Withdrawn."},
                  "404": {"description": "No such channel or undelivered message.", "content": {"text/plain": {"schema": {"type": "string"}}}},
                  "410": {"description": "The push channel was unsubscribed.", "content": {"text/plain": {"schema": {"type": "string"}}}}
                }
              }
            },
            "/fcm/connect/subscribe": {
              "post": {
                "operationId": "legacyWebSubscription",
                "summary": "Make a web app token on a push channel of this server (older web receivers).",
                "security": [],
                "requestBody": {
                  "required": true,
                  "content": {
                    "application/x-www-form-urlencoded": {
                      "schema": {
                        "type": "object",
                        "required": ["authorized_entity", "endpoint", "encryption_key", "encryption_auth"],
                        "properties": {
                          "authorized_entity": {"type": "string", "description": "The project's sender id."},
                          "endpoint": {"type": "string", "description": "The push channel's URL, ending in its token."},
                          "encryption_key": {"type": "string", "description": "P-256 public key, base64url."},
                          "encryption_auth": {"type": "string", "description": "16-byte auth secret, base64url."}
                        }
                      }
                    }
                  }
                },
                "responses": {
                  "200": {
                    "description": "The token and an opaque pushSet.",
                    "content": {"application/json": {"schema": {"type": "object", "properties": {"token": {"type": "string"}, "pushSet": {"type": "string"}}}}}
                  },
                  "default": {"$ref": "#/components/responses/Error"}
                }
              }
            },
            "/fcm/notification": {
              "post": {
                "operationId": "deviceGroup",
                "summary": "Create a device group, or add or remove members.",
                "security": [{"serverKey": []}, {"bearer": []}],
                "parameters": [{"name": "project_id", "in": "header", "schema": {"type": "string"}, "description": "The sender id."}],
                "requestBody": {
                  "required": true,
                  "content": {
                    "application/json": {
                      "schema": {
                        "type": "object",
                        "required": ["operation"],
                        "properties": {
                          "operation": {"type": "string", "enum": ["create", "add", "remove"]},
                          "notification_key_name": {"type": "string"},
                          "notification_key": {"type": "string"},
                          "registration_ids": {"type": "array", "maxItems": 20, "items": {"type": "string"}}
                        }
                      }
                    }
                  }
                },
                "responses": {
                  "200": {
                    "description": "The group's notification key.",
                    "content": {"application/json": {"schema": {"type": "object", "properties": {"notification_key": {"type": "string"}}}}}
                  },
                  "default": {"$ref": "#/components/responses/LegacyError"}
                }
              },
              "get": {
                "operationId": "deviceGroupKey",
                "summary": "A device group's notification key, by name.",
                "security": [{"serverKey": []}, {"bearer": []}],
                "parameters": [
                  {"name": "notification_key_name", "in": "query", "required": true, "schema": {"type": "string"}},
                  {"name": "project_id", "in": "header", "schema": {"type": "string"}}
                ],
                "responses": {
                  "200": {"description": "The key.", "content": {"application/json": {"schema": {"type": "object"}}}},
                  "default": {"$ref": "#/components/responses/LegacyError"}
                }
              }
            },
            \#(messageEvents),
            "/v1beta1/projects/{project}/androidApps/{app}/deliveryData": {
              "get": {
                "operationId": "deliveryData",
                "summary": "Daily delivery counts of an Android app.",
                "security": [{"bearer": []}],
                "parameters": [
                  {"$ref": "#/components/parameters/project"},
                  {"name": "app", "in": "path", "required": true, "schema": {"type": "string"}},
                  {"name": "pageSize", "in": "query", "schema": {"type": "integer"}},
                  {"name": "pageToken", "in": "query", "schema": {"type": "string"}}
                ],
                "responses": {
                  "200": {"description": "A page of daily counts.", "content": {"application/json": {"schema": {"type": "object"}}}},
                  "default": {"$ref": "#/components/responses/Error"}
                }
              }
            },
            "/token": {
              "post": {
                "operationId": "token",
                "summary": "Exchange a service-account assertion (RFC 7523 JWT bearer grant) for an access token.",
                "security": [],
                "requestBody": {
                  "required": true,
                  "content": {
                    "application/x-www-form-urlencoded": {
                      "schema": {
                        "type": "object",
                        "required": ["grant_type", "assertion"],
                        "properties": {"grant_type": {"type": "string"}, "assertion": {"type": "string"}}
                      }
                    }
                  }
                },
                "responses": {
                  "200": {
                    "description": "An access token.",
                    "content": {
                      "application/json": {
                        "schema": {
                          "type": "object",
                          "properties": {"access_token": {"type": "string"}, "expires_in": {"type": "integer"}, "token_type": {"type": "string"}}
                        }
                      }
                    }
                  },
                  "default": {"description": "An OAuth 2 error.", "content": {"application/json": {"schema": {"type": "object"}}}}
                }
              }
            },
            "/checkin": {
              "post": {
                "operationId": "checkin",
                "summary": "Device check-in: a new android id and security token, or the existing ones confirmed.",
                "security": [],
                "requestBody": {
                  "required": true,
                  "content": {
                    "application/x-protobuf": {"schema": {"type": "string", "format": "binary"}},
                    "application/octet-stream": {"schema": {"type": "string", "format": "binary"}}
                  }
                },
                "responses": {
                  "200": {"description": "An AndroidCheckinResponse.", "content": {"application/x-protobuf": {"schema": {"type": "string", "format": "binary"}}}},
                  "default": {"description": "A refused check-in."}
                }
              }
            },
            "/c2dm/register3": {
              \#(register3(operationID: "register3", summary: "Register an app instance of a checked-in device; answers token=... or Error=..."))
            },
            "/register": {
              \#(register3(operationID: "registerToken", summary: "The Firebase iOS SDK's token fetch: register3's form, with apns_token=p_<hex> or s_<hex> for an app instance reached through APNs; answers token=... or Error=..."))
            },
            "/v1/projects/{project}/installations": {
              "post": {
                "operationId": "createInstallation",
                "summary": "Create a Firebase installation (fid, refresh token, auth token).",
                "security": [{"apiKey": []}],
                "parameters": [{"$ref": "#/components/parameters/project"}],
                "requestBody": {
                  "required": true,
                  "content": {
                    "application/json": {
                      "schema": {
                        "type": "object",
                        "properties": {"fid": {"type": "string"}, "appId": {"type": "string"}, "authVersion": {"type": "string"}, "sdkVersion": {"type": "string"}}
                      }
                    }
                  }
                },
                "responses": {
                  "200": {"description": "The installation.", "content": {"application/json": {"schema": {"type": "object"}}}},
                  "default": {"$ref": "#/components/responses/Error"}
                }
              }
            },
            "/v1/projects/{project}/installations/{fid}/authTokens:generate": {
              "post": {
                "operationId": "refreshInstallationToken",
                "summary": "A new auth token for an installation (Authorization: FIS_v2 REFRESH_TOKEN).",
                "security": [{"apiKey": []}],
                "parameters": [
                  {"$ref": "#/components/parameters/project"},
                  {"name": "fid", "in": "path", "required": true, "schema": {"type": "string"}}
                ],
                "responses": {
                  "200": {"description": "The auth token.", "content": {"application/json": {"schema": {"type": "object"}}}},
                  "default": {"$ref": "#/components/responses/Error"}
                }
              }
            },
            "/v1/projects/{project}/registrations": {
              "post": {
                "operationId": "createWebRegistration",
                "summary": "Register a web push subscription for an installation.",
                "security": [{"apiKey": []}],
                "parameters": [
                  {"$ref": "#/components/parameters/project"},
                  {"name": "x-goog-firebase-installations-auth", "in": "header", "schema": {"type": "string"}}
                ],
                "requestBody": {
                  "required": true,
                  "content": {
                    "application/json": {
                      "schema": {
                        "type": "object",
                        "properties": {
                          "web": {
                            "type": "object",
                            "properties": {"endpoint": {"type": "string"}, "auth": {"type": "string"}, "p256dh": {"type": "string"}, "applicationPubKey": {"type": "string"}}
                          }
                        }
                      }
                    }
                  }
                },
                "responses": {
                  "200": {"description": "The registration token.", "content": {"application/json": {"schema": {"type": "object"}}}},
                  "default": {"$ref": "#/components/responses/Error"}
                }
              }
            },
            "/healthz": {
              "get": {
                "operationId": "health",
                "security": [],
                "responses": {
                  "200": {"description": "The service is up.", "content": {"application/json": {"schema": {"type": "object"}}}},
                  "503": {"description": "The node is stopping (draining): send elsewhere.", "content": {"application/json": {"schema": {"type": "object"}}}}
                }
              }
            },
            "/metrics": {
              "get": {
                "operationId": "metrics",
                "security": [],
                "responses": {"200": {"description": "Prometheus text format.", "content": {"text/plain": {"schema": {"type": "string"}}}}}
              }
            },
            "/openapi.json": {
              "get": {
                "operationId": "openapi",
                "security": [],
                "responses": {"200": {"description": "This document.", "content": {"application/json": {"schema": {"type": "object"}}}}}
              }
            }
          }
        }
        """#
}
