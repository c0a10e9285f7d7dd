/// Which Unix group grants which role; names configurable so directory groups can be used as
/// they are.
package struct RoleGroups: Sendable, Equatable {
    package var officer = "teletan-officer"
    package var hotline = "teletan-hotline"
    package var event = "teletan-event"
    package var admin = "teletan-admin"

    package init() {}

    package func roles(forGroups groups: [String]) -> Set<Role> {
        var roles = Set<Role>()
        if groups.contains(officer) { roles.insert(.officer) }
        if groups.contains(hotline) { roles.insert(.hotline) }
        if groups.contains(event) { roles.insert(.event) }
        if groups.contains(admin) { roles.insert(.admin) }
        return roles
    }
}
