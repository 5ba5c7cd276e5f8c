// Every route file of the API. To add a resource: write `routes/<resource>.ts` exporting an
// array of `defineRoute(...)` and add one line here.
import type { RouteDefinition } from "../registry.js";
import { apiKeyRoutes } from "./api-keys.js";
import { authRoutes } from "./auth.js";
import { orgUserRoutes } from "./org-users.js";
import { organizationRoutes } from "./organizations.js";

export const allRoutes: readonly RouteDefinition[] = [
  ...authRoutes,
  ...organizationRoutes,
  ...apiKeyRoutes,
  ...orgUserRoutes,
];
